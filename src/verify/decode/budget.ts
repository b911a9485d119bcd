import { VerifyError } from "../types";

/**
 * A count of the bytes decompression may produce, charged as each chunk comes out (never after the
 * whole output exists). One document gets one budget: every stage of every filter chain charges it, so a
 * chain of stages, many small streams, or one stream read twice all add up against the same bound.
 *
 * A child budget has its own, smaller limit and charges its parent too (the PDF structure streams that
 * pdf-lib holds in memory get a tighter share of the document's budget).
 *
 * Exceeding it is `too_many_pixels` (422): decompression bombs land there, as the error code says.
 */
export class ByteBudget {
  #used = 0;
  readonly limit: number;
  readonly what: string;
  readonly #parent?: ByteBudget;

  constructor(limit: number, what: string, parent?: ByteBudget) {
    this.limit = limit;
    this.what = what;
    this.#parent = parent;
  }

  /** Bytes produced so far (the work counter tests read: it never exceeds limit by more than a chunk). */
  get used(): number {
    return this.#used;
  }

  get left(): number {
    return Math.max(0, this.limit - this.#used);
  }

  charge(bytes: number, page?: number): void {
    this.#used += bytes;
    if (this.#used > this.limit) {
      throw new VerifyError(
        "too_many_pixels",
        `${this.what}: more than ${this.limit} bytes decompressed, refused as a decompression bomb`,
        page,
      );
    }
    this.#parent?.charge(bytes, page);
  }

  child(limit: number, what: string): ByteBudget {
    return new ByteBudget(Math.min(limit, this.limit), what, this);
  }
}
