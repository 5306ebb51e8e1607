/** Unicode scripts for the text kinds: classes for fpe, detection and token alphabets. */
export { SCRIPT_IDS, isScriptId, scriptForLang, type ScriptId } from './scriptIds.js';
export { detectScript } from './detectScript.js';
export { tokenAlphabet, type TokenAlphabet } from './tokenAlphabets.js';
export {
  charClass, charClasses, classIdOf, indexInClass, IN_PLACE_LETTER, UNCLASSED, type CharClass,
} from './charClassTable.js';
export { analyseLetters, renderLetters, type LetterPattern } from './letterPattern.js';
