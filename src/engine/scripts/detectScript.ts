/**
 * Which script a value is written in, so its token can be written in the same one.
 */
import type { Lang } from '../types.js';
import { charClass, classIdOf, inPlaceLetterScript } from './charClassTable.js';
import { scriptForLang, type ScriptId } from './scriptIds.js';

/**
 * The script of most letters in `value` (digits do not count). Ties go to the lang's default
 * script, then to the script seen first. A value with no letter of a supported script (digits,
 * punctuation, Greek...) gets the lang's default script.
 */
export function detectScript(value: string, lang: Lang): ScriptId {
  const counts = new Map<ScriptId, number>();
  let fallback: ScriptId | undefined;
  for (const ch of value.normalize('NFC')) {
    const cp = ch.codePointAt(0) as number;
    const id = classIdOf(cp);
    if (id >= 0) {
      const cls = charClass(id);
      if (!cls.isDigit) counts.set(cls.script, (counts.get(cls.script) ?? 0) + 1);
    } else if (fallback === undefined) {
      // ー or 々 alone still say which script the value is in.
      fallback = inPlaceLetterScript(cp);
    }
  }
  const preferred = scriptForLang(lang);
  let best: ScriptId | undefined;
  let bestCount = 0;
  // Map iteration follows first appearance, which breaks ties other than the preferred one.
  for (const [script, count] of counts) {
    if (count > bestCount || (count === bestCount && script === preferred)) {
      best = script;
      bestCount = count;
    }
  }
  return best ?? fallback ?? preferred;
}
