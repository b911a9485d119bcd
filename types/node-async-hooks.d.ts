// The part of node:async_hooks the Worker uses (nodejs_compat provides it; @types/node is not installed).
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, fn: () => R): R;
  }
}
