// The part of pako 1.x that decode/inflate.ts uses (pako ships no types).
declare module "pako" {
  class Inflate {
    constructor(options?: { raw?: boolean; chunkSize?: number });
    push(data: Uint8Array, mode?: boolean | number): boolean;
    onData: (chunk: Uint8Array) => void;
    err: number;
    msg: string;
    ended: boolean;
  }
  const pako: { Inflate: typeof Inflate };
  export default pako;
}
