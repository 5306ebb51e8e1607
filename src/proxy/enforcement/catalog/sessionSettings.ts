/**
 * The session settings the write path depends on: the SQL analysis and literal splicing assume
 * client_encoding UTF8 and standard_conforming_strings on. PostgreSQL reports both in
 * ParameterStatus; while they are otherwise (or a statement that may change them has not yet been
 * answered), statements that would need pgveil's work are refused rather than misread, and so is
 * any text pgveil could read otherwise than PostgreSQL: only 7-bit text without a backslash reads
 * the same under every client encoding and either standard_conforming_strings.
 */
import type { SqlAnalysis, StatementAnalysis } from '../../sql/index.js';
import { DEFAULT_DATE_STYLE, parseDateStyle, type DateStyle } from '../valueCodecs/dateStyle.js';
import { unsupportedRefusal, type PolicyRefusal } from '../policyRefusal.js';

/**
 * The encodings pgveil reads text in, as update() spells them. Not SQL_ASCII: PostgreSQL does not
 * check such text, so invalid UTF-8 would reach it as bytes that pgveil read as U+FFFD.
 */
const SAFE_ENCODINGS = new Set(['UTF8', 'UNICODE']);
/** Whether every statement of the text only sets or shows settings. */
function onlySettingStatements(analysis: SqlAnalysis): boolean {
  for (const statement of analysis.statements) if (!SETTING_STATEMENTS.has(statement.type)) return false;
  return true;
}

/** What another client encoding or backslash escapes may make PostgreSQL read otherwise: any non-ASCII character, a backslash. */
const READ_OTHERWISE = /[^\x00-\x7f]|\\/;
const SETTING_STATEMENTS = new Set(['VariableSetStmt', 'VariableShowStmt', 'TransactionStmt', 'DiscardStmt', 'Empty']);

export class SessionSettings {
  private clientEncoding = 'UTF8';
  private standardStrings = 'on';
  /** How the session prints and reads dates (date columns are turned into ISO for the engine). */
  dateStyle: DateStyle = DEFAULT_DATE_STYLE;
  /** A statement that names the settings is in flight: known again once the session is idle. */
  inDoubt = false;
  /**
   * A Query or Execute sent may change the settings out of sight (a function, a column default, a
   * view calling set_config): PostgreSQL reports it only at ReadyForQuery, so the settings are
   * known again once the session is idle.
   */
  private changeOutOfSight = false;

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
   * settings in 7-bit text pass, so a session can put things right.
   */
  check(sql: string, analysis: SqlAnalysis, policies: { mentionsProtectedTable(sql: string): boolean }): PolicyRefusal | undefined {
    const unsure = !this.safe || this.inDoubt;
    // The analysis may have read another statement than PostgreSQL will: nothing of it is trusted.
    if ((unsure || this.changeOutOfSight) && READ_OTHERWISE.test(sql)) {
      if (unsure) {
        return unsupportedRefusal('pgveil refused the statement: while client_encoding is not UTF8 or standard_conforming_strings is off (or a statement that may change them is unanswered), text with a non-ASCII character or a backslash may mean something else to PostgreSQL than to pgveil; set client_encoding to UTF8 and standard_conforming_strings on, each on its own');
      }
      return unsupportedRefusal('pgveil refused the statement: text with a non-ASCII character or a backslash may not follow, unanswered, a statement that may change client_encoding or standard_conforming_strings out of pgveil\'s sight (through a function, a default, a view): send it once the statements before it are answered, or send its values as parameters');
    }
    if (this.copyMayMeetOtherEncoding(analysis)) {
      // PostgreSQL reads COPY rows in the client_encoding in force when the COPY starts.
      return unsupportedRefusal('pgveil refused the COPY: it loads protected columns, and a statement before it (unanswered, or earlier in the same text) may change client_encoding out of pgveil\'s sight, in which PostgreSQL would read its rows; send the COPY on its own once the statements before it are answered');
    }
    const settingsOnly = onlySettingStatements(analysis);
    const mentions = this.mentionsSettingWords(analysis);
    if (settingsOnly) {
      if (mentions) this.inDoubt = true;
      return undefined;
    }
    if (!this.safe || this.inDoubt) {
      // Under other settings the text may not mean what the analysis read: only text naming no
      // protected table at all is safe to forward.
      if (analysis.passThrough && !mentions && !policies.mentionsProtectedTable(sql)) return undefined;
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

  /** Whether a COPY loading protected columns follows, unanswered or earlier in the text (each COPY), a statement that may change the settings. */
  private copyMayMeetOtherEncoding(analysis: SqlAnalysis): boolean {
    let changed = this.changeOutOfSight;
    for (const statement of analysis.statements) {
      if (statement.copyFrom !== undefined && changed) return true;
      if (!changesNoSettingUnseen(statement)) changed = true;
    }
    return false;
  }

  /**
   * Whether the text names something that may change the settings. Under the settings pgveil
   * relies on, string constants are read exactly and left out (a value `'password reset'`
   * changes nothing); otherwise the whole text counts.
   */
  private mentionsSettingWords(analysis: SqlAnalysis): boolean {
    return !this.safe || this.inDoubt ? analysis.settingWords.inText : analysis.settingWords.inCode;
  }

  /**
   * The refusal for executing a COPY prepared earlier that loads protected columns, if any: the
   * server reads its rows in the client_encoding in force when it starts, which pgveil knows only
   * when the settings are safe and nothing sent before may have changed them.
   */
  preparedCopyRefusal(): PolicyRefusal | undefined {
    if (this.safe && !this.inDoubt && !this.changeOutOfSight) return undefined;
    return unsupportedRefusal('pgveil refused the COPY: it loads protected columns, and when it starts client_encoding may not be UTF8 (the session set another, or a statement before it, unanswered, may change it), in which PostgreSQL would read its rows; run it with client_encoding UTF8, once the statements before it are answered');
  }

  /** A Query or Execute forwarded: whether running it may change the settings out of sight (mayChangeSettingsUnseen). */
  sent(mayChangeUnseen: boolean): void {
    if (mayChangeUnseen) this.changeOutOfSight = true;
  }

  /** ReadyForQuery: when nothing else is owed a reply, every ParameterStatus of what was sent has arrived. */
  settled(idle: boolean): void {
    if (!idle) return;
    this.inDoubt = false;
    this.changeOutOfSight = false;
  }
}

/**
 * Whether running the statements may change client_encoding or standard_conforming_strings before
 * PostgreSQL reports it (only at ReadyForQuery): nearly any statement may, through a function, a
 * column default, a view, a rule or a trigger that calls set_config, and so does any text naming
 * the settings (a SET prepared now and executed in a later batch). Not: starting a transaction or
 * a savepoint, SHOW, and SET, RESET and DISCARD of other settings. Unknown: may.
 */
export function mayChangeSettingsUnseen(analysis: SqlAnalysis | undefined): boolean {
  return analysis === undefined || analysis.settingWords.inText || !analysis.statements.every(changesNoSettingUnseen);
}

function changesNoSettingUnseen(statement: StatementAnalysis): boolean {
  switch (statement.type) {
    case 'Empty': case 'VariableShowStmt': case 'VariableSetStmt': case 'DiscardStmt':
      return true;
    case 'TransactionStmt':
      // COMMIT is not: it runs deferred triggers.
      return (statement.sessionEffects ?? []).every((effect) => effect.kind === 'transaction'
        && (effect.action === 'begin' || effect.action === 'savepoint' || effect.action === 'release'));
    default:
      return false;
  }
}
