/**
 * A minimal little-endian TIFF around a raw CCITT Group 4 stream (one strip, WhiteIsZero), so the one G4
 * decoder serves both TIFF files and PDF /CCITTFaxDecode images.
 */
export function ccittAsTiff(g4: Uint8Array, width: number, height: number): Uint8Array {
  const tags: [number, number, number][] = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, 1],
    [259, 3, 4],
    [262, 3, 0],
    [273, 4, 0], // patched below
    [277, 3, 1],
    [278, 4, height],
    [279, 4, g4.length],
  ];
  const ifdSize = 2 + tags.length * 12 + 4;
  const dataOff = 8 + ifdSize;
  const out = new Uint8Array(dataOff + g4.length);
  const v = new DataView(out.buffer);
  out.set([0x49, 0x49, 0x2a, 0]);
  v.setUint32(4, 8, true);
  v.setUint16(8, tags.length, true);
  tags.forEach(([tag, type, value], i) => {
    const e = 10 + i * 12;
    v.setUint16(e, tag, true);
    v.setUint16(e + 2, type, true);
    v.setUint32(e + 4, 1, true);
    if (type === 3) v.setUint16(e + 8, value, true);
    else v.setUint32(e + 8, tag === 273 ? dataOff : value, true);
  });
  v.setUint32(10 + tags.length * 12, 0, true);
  out.set(g4, dataOff);
  return out;
}
