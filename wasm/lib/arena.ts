// A bump arena over linear memory. The core holds no state between calls except what the host put
// there, so the host resets the arena at the start of each job and never needs free().

let top: usize = 0;

function base(): usize {
  return (__heap_base + 15) & ~(<usize>15);
}

export function arenaReset(): void {
  top = base();
}

/** The arena's current top, to rewind to later. */
export function arenaMark(): usize {
  if (top == 0) top = base();
  return top;
}

/**
 * Give back everything reserved since `mark` (arenaMark). What was reserved before it stays valid; what
 * was reserved after it must not be read again.
 */
export function arenaRewind(mark: usize): void {
  if (mark >= base() && mark <= top) top = mark;
}

/** Reserve `bytes` (16-byte aligned), growing memory when needed. Not zeroed. */
export function arenaAlloc(bytes: usize): usize {
  if (top == 0) top = base();
  const p = top;
  top = (p + bytes + 15) & ~(<usize>15);
  const have = (<usize>memory.size()) << 16;
  if (top > have) {
    const pages = <i32>((top - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) unreachable();
  }
  return p;
}

/** Reserve and zero. */
export function arenaCalloc(bytes: usize): usize {
  const p = arenaAlloc(bytes);
  memory.fill(p, 0, bytes);
  return p;
}
