/**
 * How many pixels one request may make the service decode. Without it a small request buys a lot of
 * CPU: one highly compressible 40-megapixel PNG named by 100 items and by 20 references each is 2,100
 * decodes of 40 MP (about 35 minutes of CPU) from a few hundred KB of body.
 *
 * A request is charged for:
 * - validation at the request: the first page of every distinct document it holds (an uploaded part or
 *   a URL), decoded once however many items and references name it;
 * - the checks it asks for: for every item, the first page of its document and of each of its own
 *   references (each item is checked on its own, possibly in another isolate, so a file named by ten
 *   items is decoded ten times there).
 * Pages beyond the first are bounded per document (200 pages, 40 MP a page) and, inline, by the item's budget.
 *
 * Pixels are counted as they are decoded, so a request is refused at most one document past the limit.
 */
export const DECODE_BUDGET_MEGAPIXELS = 2_000;
const MEGA = 1_000_000;

export interface BudgetOverrun {
  limitMegapixels: number;
  megapixels: number;
}

export class DecodeBudget {
  #spent = 0;
  constructor(readonly limitMegapixels: number = DECODE_BUDGET_MEGAPIXELS) {}

  /** Charges `pixels`; the overrun when the total passes the limit, else null. */
  charge(pixels: number): BudgetOverrun | null {
    this.#spent += pixels;
    return this.#spent > this.limitMegapixels * MEGA
      ? { limitMegapixels: this.limitMegapixels, megapixels: Math.ceil(this.#spent / MEGA) }
      : null;
  }

  get spentMegapixels(): number {
    return this.#spent / MEGA;
  }
}
