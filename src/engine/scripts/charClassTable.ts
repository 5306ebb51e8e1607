/**
 * The character class lookup, built once from CHAR_CLASS_SPECS on first use (≈ 50 ms). Hot paths
 * ask classIdOf / indexInClass per code point: two typed-array reads in the BMP, a binary search
 * over a few segments above it. Unicode property regexes run here, at build time only.
 */
import { CHAR_CLASS_SPECS, IN_PLACE_LETTERS, type MemberCategory } from './charClassSpecs.js';
import type { ScriptId } from './scriptIds.js';

/** classIdOf for a code point with no class: it stays in place (marks, spaces, punctuation...). */
export const UNCLASSED = -1;
/** classIdOf for a letter listed in IN_PLACE_LETTERS: it stays in place too. */
export const IN_PLACE_LETTER = -2;

export interface CharClass {
  readonly id: number;
  readonly name: string;
  readonly script: ScriptId;
  readonly isDigit: boolean;
  /** The members in a fixed order; a member's position is its numeral in fpe. */
  readonly members: Uint32Array;
}

interface Segment {
  readonly first: number;
  readonly last: number;
  readonly classId: number;
  /** Index in the class of `first`. */
  readonly offset: number;
}

const CATEGORY: Readonly<Record<MemberCategory, RegExp>> = {
  Lu: /^\p{Lu}$/u,
  Ll: /^\p{Ll}$/u,
  L: /^\p{L}$/u,
  Nd: /^\p{Nd}$/u,
};

const BMP_SIZE = 0x10000;
const UNASSIGNED = /^\p{Cn}$/u;

interface Tables {
  readonly bmpClassId: Int16Array;
  readonly bmpIndex: Uint16Array;
  /** Classed code points above the BMP, by ascending `first`. */
  readonly astralSegments: readonly Segment[];
  readonly inPlaceScripts: ReadonlyMap<number, ScriptId>;
  readonly classes: readonly CharClass[];
}

/** Refuses a spec range that reaches an unassigned code point (see charClassSpecs.ts). */
function checkAssigned(cp: number, where: string): void {
  if (UNASSIGNED.test(String.fromCodePoint(cp))) {
    throw new Error(`${where} lists unassigned code point U+${cp.toString(16).toUpperCase()}`);
  }
}

function isNfcStable(cp: number): boolean {
  const ch = String.fromCodePoint(cp);
  return ch.normalize('NFC') === ch;
}

function buildTables(): Tables {
  const bmpClassId = new Int16Array(BMP_SIZE).fill(UNCLASSED);
  const bmpIndex = new Uint16Array(BMP_SIZE);
  const astralSegments: Segment[] = [];
  const inPlaceScripts = new Map<number, ScriptId>();
  const classes: CharClass[] = [];

  for (const { script, ranges } of IN_PLACE_LETTERS) {
    for (const [first, last] of ranges) {
      for (let cp = first; cp <= last; cp++) {
        checkAssigned(cp, `in-place letters of ${script}`);
        inPlaceScripts.set(cp, script);
        if (cp < BMP_SIZE) bmpClassId[cp] = IN_PLACE_LETTER;
      }
    }
  }
  const claimed = new Set<number>(inPlaceScripts.keys());
  for (const spec of CHAR_CLASS_SPECS) {
    const test = CATEGORY[spec.category];
    const members: number[] = [];
    for (const [first, last] of spec.ranges) {
      for (let cp = first; cp <= last; cp++) {
        if (claimed.has(cp)) continue;
        checkAssigned(cp, spec.name);
        if (!test.test(String.fromCodePoint(cp)) || !isNfcStable(cp)) continue;
        claimed.add(cp);
        members.push(cp);
      }
    }
    if (members.length < 2) throw new Error(`character class ${spec.name} has fewer than two members`);
    const id = classes.length;
    classes.push({
      id, name: spec.name, script: spec.script, isDigit: spec.category === 'Nd', members: Uint32Array.from(members),
    });
    members.forEach((cp, index) => {
      if (cp < BMP_SIZE) {
        bmpClassId[cp] = id;
        bmpIndex[cp] = index;
        return;
      }
      const previous = astralSegments[astralSegments.length - 1];
      const continuesRun = previous !== undefined && previous.classId === id && previous.last === cp - 1
        && previous.offset + (cp - previous.first) === index;
      if (previous && continuesRun) {
        astralSegments[astralSegments.length - 1] = { ...previous, last: cp };
      } else {
        astralSegments.push({ first: cp, last: cp, classId: id, offset: index });
      }
    });
  }
  astralSegments.sort((a, b) => a.first - b.first);
  return { bmpClassId, bmpIndex, astralSegments, inPlaceScripts, classes };
}

let cached: Tables | undefined;
function tables(): Tables {
  cached ??= buildTables();
  return cached;
}

function astralSegment(segments: readonly Segment[], cp: number): Segment | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const seg = segments[mid] as Segment;
    if (cp < seg.first) hi = mid - 1;
    else if (cp > seg.last) lo = mid + 1;
    else return seg;
  }
  return undefined;
}

/** The class id of a code point, or UNCLASSED, or IN_PLACE_LETTER. */
export function classIdOf(cp: number): number {
  const t = tables();
  if (cp < BMP_SIZE) return t.bmpClassId[cp] as number;
  if (t.inPlaceScripts.has(cp)) return IN_PLACE_LETTER;
  return astralSegment(t.astralSegments, cp)?.classId ?? UNCLASSED;
}

/** The position of a classed code point in its class's members (-1 for any other). */
export function indexInClass(cp: number): number {
  const t = tables();
  if (cp < BMP_SIZE) return t.bmpClassId[cp]! >= 0 ? (t.bmpIndex[cp] as number) : -1;
  const seg = astralSegment(t.astralSegments, cp);
  return seg ? seg.offset + (cp - seg.first) : -1;
}

export function charClass(id: number): CharClass {
  const cls = tables().classes[id];
  if (!cls) throw new RangeError(`no character class ${id}`);
  return cls;
}

/** Every class, by id. */
export function charClasses(): readonly CharClass[] {
  return tables().classes;
}

/** The script of an in-place letter (ー, 々, ـ ...), or undefined for any other code point. */
export function inPlaceLetterScript(cp: number): ScriptId | undefined {
  return tables().inPlaceScripts.get(cp);
}
