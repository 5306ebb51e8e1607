/**
 * Small typed arrays carved out of a shared slab that already lives on the C heap.
 *
 * V8 keeps a fresh typed array of 64 bytes or less on its own heap. The first `.buffer`,
 * `subarray()` or N-API access moves it out: a malloc, a copy, a registration, and a sweep after
 * the next collection, which for one value's numerals costs more than the AES rounds over them.
 * Arrays made here are views of a slab allocated once per SLAB_BYTES, as Node's Buffer pool does:
 * those steps never happen. A slab is collected once no view of it is left: one view kept alive
 * keeps the slab's other values in memory too (numerals, plaintext ones on unprotect), as long as
 * separate arrays would each have lived until collected.
 */
const SLAB_BYTES = 16 * 1024;
/** Larger arrays go on the C heap by themselves; the slab is for the small ones. */
const MAX_CARVED_BYTES = 256;

let slab = new ArrayBuffer(SLAB_BYTES);
let used = 0;

function carve(bytes: number): number {
  // 8-byte alignment serves every element size.
  const size = (bytes + 7) & ~7;
  if (used + size > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = 0;
  }
  const at = used;
  used += size;
  return at;
}

/** A zeroed Uint16Array of `length` elements, never on V8's heap. */
export function offHeapUint16Array(length: number): Uint16Array {
  const bytes = length * 2;
  if (bytes > MAX_CARVED_BYTES) return new Uint16Array(length);
  // carve() first: it may replace the slab, and the view must be of the one it carved from.
  const at = carve(bytes);
  return new Uint16Array(slab, at, length);
}

/** A zeroed Uint8Array of `length` bytes, never on V8's heap. */
export function offHeapUint8Array(length: number): Uint8Array {
  if (length > MAX_CARVED_BYTES) return new Uint8Array(length);
  const at = carve(length);
  return new Uint8Array(slab, at, length);
}
