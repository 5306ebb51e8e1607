/**
 * Which members of a class may stand before a given run of combining marks without NFC changing
 * the text. "q̇" is NFC, but "ė" + U+0307 is not (NFC composes it to one code point): were fpe
 * to map q to e there, the value would change length and no longer decrypt. So a classed letter
 * followed by marks takes its value only among the members NFC leaves alone before those marks.
 */
import { charClass } from './charClassTable.js';

const RESTRICTED_CACHE_LIMIT = 512;
const restrictedCache = new Map<string, Uint32Array>();

/**
 * Base letters that begin the decomposition of a precomposed character with a combining mark
 * (e for é, न for ऩ, か for が). Only members whose own decomposition starts with one of them can
 * compose with a mark; the rest (all of Han and Hangul among them) need no check. Built on first
 * need from the BMP, where every composition with a base of a supported script lives.
 */
let composingBases: ReadonlySet<number> | undefined;

function buildComposingBases(): ReadonlySet<number> {
  const bases = new Set<number>();
  const mark = /\p{M}/u;
  for (let cp = 0; cp < 0x10000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    const nfd = ch.normalize('NFD');
    if (nfd === ch || nfd.normalize('NFC') !== ch || !mark.test(nfd)) continue;
    bases.add(nfd.codePointAt(0) as number);
  }
  return bases;
}

/** Per class id: its members that may compose with a following mark. */
const composersByClass = new Map<number, ReadonlySet<number>>();

function composersOf(classId: number): ReadonlySet<number> {
  let composers = composersByClass.get(classId);
  if (!composers) {
    composingBases ??= buildComposingBases();
    const bases = composingBases;
    composers = new Set(Array.from(charClass(classId).members).filter((cp) =>
      bases.has(String.fromCodePoint(cp).normalize('NFD').codePointAt(0) as number)));
    composersByClass.set(classId, composers);
  }
  return composers;
}

/** The members of class `classId` that `marks` (a run of combining marks) leaves as they are. */
export function membersStableBefore(classId: number, marks: string): Uint32Array {
  const key = `${classId}\u0000${marks}`;
  const hit = restrictedCache.get(key);
  if (hit) return hit;
  const members = charClass(classId).members;
  const composers = composersOf(classId);
  const stable = composers.size === 0 ? members : members.filter((cp) => {
    if (!composers.has(cp)) return true;
    const seq = String.fromCodePoint(cp) + marks;
    return seq.normalize('NFC') === seq;
  });
  if (restrictedCache.size >= RESTRICTED_CACHE_LIMIT) restrictedCache.clear();
  restrictedCache.set(key, stable);
  return stable;
}
