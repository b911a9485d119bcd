/**
 * The reviewer's crop of a located signature: rendered once from the item's input and kept beside it in
 * the inbox (so it expires with the inbox), then served from there. And the crop learning takes instead.
 */
import type { RegionStore } from "../domain/tenancy";
import type { CheckItemRow } from "../storage/schema/checks";
import type { CheckEngine } from "./engine";
import { cropKey } from "./inbox";

export function checkCrops(scope: { orgId: string; store: RegionStore; engine: CheckEngine }) {
  return {
    /** The crop's PNG, or null when the item's input has expired from the inbox. */
    async signatureCrop(
      jobId: string,
      item: CheckItemRow,
      sig: { index: number; page: number; box: { x: number; y: number; w: number; h: number } },
    ): Promise<Uint8Array | null> {
      const key = cropKey(scope.orgId, jobId, item.itemIndex, sig.index);
      const cached = await scope.store.files.get(key);
      if (cached) return new Uint8Array(await cached.arrayBuffer());
      const input = await scope.store.files.get(item.inputKey);
      if (!input) return null;
      const png = await scope.engine.signatureCrop(new Uint8Array(await input.arrayBuffer()), sig.page, sig.box);
      await scope.store.files.put(key, png, { httpMetadata: { contentType: "image/png" } });
      return png;
    },

    /**
     * What a confirmed signature is learned from (CheckEngine.learnedCrop), or null once the item's input
     * has expired. Rendered from the input and not kept: it is not the reviewer's crop.
     */
    async learnedCrop(
      item: CheckItemRow,
      sig: { page: number; box: { x: number; y: number; w: number; h: number } },
    ): Promise<Uint8Array | null> {
      const input = await scope.store.files.get(item.inputKey);
      if (!input) return null;
      return scope.engine.learnedCrop(new Uint8Array(await input.arrayBuffer()), sig.page, sig.box, item.inputType);
    },
  };
}

export type CheckCrops = ReturnType<typeof checkCrops>;
