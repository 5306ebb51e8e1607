/**
 * The session settings the write path depends on: the SQL analysis and literal splicing assume
 * client_encoding UTF8 and standard_conforming_strings on. PostgreSQL reports both in
 * ParameterStatus; while they are otherwise (or a statement that may change them has not yet been
 * answered), statements that would need pgveil's work are refused rather than misread.
 */
import type { SqlAnalysis } from '../../sql/index.js';
import { DEFAULT_DATE_STYLE, parseDateStyle, type DateStyle } from '../valueCodecs/dateStyle.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';

const SAFE_ENCODINGS = new Set(['UTF8', 'UNICODE', 'SQL_ASCII']);
const SETTING_STATEMENTS = new Set(['VariableSetStmt', 'VariableShowStmt', 'TransactionStmt', 'DiscardStmt', 'Empty']);

export class SessionSettings {
  private clientEncoding = 'UTF8';
  private standardStrings = 'on';
  /** How the session prints and reads dates (date columns are turned into ISO for the engine). */
  dateStyle: DateStyle = DEFAULT_DATE_STYLE;
  /** A statement that may change the settings is in flight: known again at ReadyForQuery. */
  inDoubt = false;

  update(name: string, value: string): void {
    if (name === 'client_encoding') this.clientEncoding = value.toUpperCase().replace(/[-_]/g, '');
    else if (name === 'standard_conforming_strings') this.standardStrings = value.toLowerCase();
    else if (name === 'DateStyle') this.dateStyle = parseDateStyle(value);
  }

  get safe(): boolean {
    return SAFE_ENCODINGS.has(this.clientEncoding) && this.standardStrings === 'on';
  }

  /**
   * The refusal for `sql` under the current settings, if any. Statements that only set or show
   * settings always pass, so a session can put things right.
   */
  check(analysis: SqlAnalysis, mentionsProtectedTable: () => boolean): PolicyRefusal | undefined {
    const settingsOnly = analysis.statements.every((statement) => SETTING_STATEMENTS.has(statement.type));
    const mentions = this.mentionsSettingWords(analysis);
    if (settingsOnly) {
      if (mentions) this.inDoubt = true;
      return undefined;
    }
    if (!this.safe || this.inDoubt) {
      // Under other settings the text may not mean what the analysis read: only text naming no
      // protected table at all is safe to forward.
      if (analysis.passThrough && !mentions && !mentionsProtectedTable()) return undefined;
      return unsupportedRefusal('pgveil refused the statement: sessions with column policies need client_encoding UTF8 and standard_conforming_strings on (send the statement after the setting is back, on its own)');
    }
    if (mentions) {
      if (!analysis.passThrough || analysis.statements.length > 1) {
        return unsupportedRefusal('pgveil refused the statement: it may change client_encoding or standard_conforming_strings, which pgveil relies on to read the statements after it; send it on its own');
      }
      this.inDoubt = true;
    }
    return undefined;
  }

  /**
   * Whether the text names something that may change the settings. Under the settings pgveil
   * relies on, string constants are read exactly and left out (a value `'password reset'`
   * changes nothing); otherwise the whole text counts.
   */
  private mentionsSettingWords(analysis: SqlAnalysis): boolean {
    return !this.safe || this.inDoubt ? analysis.settingWords.inText : analysis.settingWords.inCode;
  }

  /** ReadyForQuery: every ParameterStatus of the statements before it has arrived. */
  settled(): void {
    this.inDoubt = false;
  }
}
