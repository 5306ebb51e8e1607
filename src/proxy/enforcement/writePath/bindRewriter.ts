/**
 * The write path for Bind: each parameter value that feeds a protected column is protected with
 * the column's policy, in text or binary format, arrays (`col = ANY($n)`) element by element.
 * A Bind of few scalar values, whose columns protect one value in bounded work, is rewritten at
 * once (`rewriteBindNow`); otherwise all values of one policy go to the engine in one call.
 */
import type { ColumnPolicy } from '../../../policy/index.js';
import { isLongerThan, ProtectionError, type Engine, type ValueProtection } from '../../../engine/index.js';
import { formatBinaryArray, formatTextArray, parseBinaryArray, parseTextArray } from '../valueCodecs/arrayCodecs.js';
import { missingValueRefusal, valueRefusal } from '../policyRefusal.js';
import { ARRAY_ELEMENT_TYPES, decodeBinary, encodeBinary } from '../valueCodecs/valueCodecs.js';
import { ProtectionBatch, protectionRefusal, valueTooLong } from './valueProtector.js';
import type { DateStyle } from '../valueCodecs/dateStyle.js';
import { normaliseText } from './normaliseText.js';
import { formatAt, readBind, readBindValueLayout, type BindMessage, type BindValueLayout } from '../../protocol/messageReaders.js';
import { bindPlanOf, type BindPlan, type BoundStatement, type ScalarParam } from './bindPlan.js';
import { bindFrame, splicedBindFrame, type BindValue } from './bindFrame.js';

export type { BoundStatement } from './bindPlan.js';

function typeName(oid: number): string {
  return oid === 0 ? 'unknown type' : `type ${oid}`;
}

/**
 * Returns the Bind to forward (the same frame when no parameter needs protecting). `paramTypes`
 * are the statement's parameter types as declared in Parse or reported by ParameterDescription.
 */
export async function rewriteBind(frame: Buffer, bind: BindMessage, statement: BoundStatement, engine: Engine, style: DateStyle): Promise<Buffer> {
  const plan = bindPlanOf(statement);
  const { values, paramFormats } = withExtraParams(bind, statement, plan);
  const changed = values.length !== bind.values.length;
  if (plan.scalars === undefined) return rewriteWithArrays(frame, bind, statement, engine, style, values, paramFormats, changed);
  const groups = scalarGroups(plan.scalars, values, paramFormats, statement.paramTypes, style);
  if (groups.length === 0) return changed ? bindFrame(bind, paramFormats, values) : frame;
  // Every policy's call is issued at once (they may share a loop turn with other sessions' calls);
  // a refusal is the first failing policy's, in the order the statement's parameters name them.
  const outcomes = await Promise.allSettled(groups.map(({ policy, texts }) => engine.protect(policy.kind, texts, policy.engineOptions)));
  for (let g = 0; g < groups.length; g++) {
    const outcome = outcomes[g] as PromiseSettledResult<{ result: string[] }>;
    const group = groups[g] as ValueGroup;
    if (outcome.status === 'rejected') throw protectionRefusal(group.policy, outcome.reason);
    placeProtected(group, outcome.value.result, values);
  }
  return bindFrame(bind, paramFormats, values);
}

/** Most protected values a Bind may carry to be rewritten inline, in the turn it arrived. */
const INLINE_VALUES = 16;

/**
 * `rewriteBind`, done now, when the statement binds only scalars, at most INLINE_VALUES of them
 * protected, each column with an inline protection (bounded work per value): the same bytes and
 * the same refusals, without waiting for the engine's batch. Undefined when it does not apply.
 */
export function rewriteBindNow(
  frame: Buffer, statement: BoundStatement, inline: (policy: ColumnPolicy) => ValueProtection | undefined, maxValueBytes: number, style: DateStyle,
): Buffer | undefined {
  const plan = bindPlanOf(statement);
  if (plan.scalars === undefined || plan.scalars.length > INLINE_VALUES) return undefined;
  for (const { plan: param } of plan.scalars) if (inline(param.policy) === undefined) return undefined;
  if (plan.extras.length === 0) return rewriteInPlace(frame, plan.scalars, statement.paramTypes, inline, maxValueBytes, style);
  const bind = readBind(frame);
  const { values, paramFormats } = withExtraParams(bind, statement, plan);
  const changed = values.length !== bind.values.length;
  const groups = scalarGroups(plan.scalars, values, paramFormats, statement.paramTypes, style);
  if (groups.length === 0) return changed ? bindFrame(bind, paramFormats, values) : frame;
  for (const group of groups) {
    placeProtected(group, protectEach(inline(group.policy) as ValueProtection, group, maxValueBytes), values);
  }
  return bindFrame(bind, paramFormats, values);
}

/**
 * rewriteBindNow for a statement pgveil gave no extra parameters: only the protected values are
 * read out, and the Bind is copied with theirs in place (no view per value, no full rewrite).
 */
function rewriteInPlace(
  frame: Buffer, scalars: readonly ScalarParam[], paramTypes: readonly number[],
  inline: (policy: ColumnPolicy) => ValueProtection | undefined, maxValueBytes: number, style: DateStyle,
): Buffer {
  const layout = readBindValueLayout(frame);
  const groups = scalarGroups(scalars, { frame, layout }, layout.paramFormats, paramTypes, style);
  if (groups.length === 0) return frame;
  const replaced: (BindValue | undefined)[] = [];
  for (const group of groups) {
    placeProtected(group, protectEach(inline(group.policy) as ValueProtection, group, maxValueBytes), replaced);
  }
  return splicedBindFrame(frame, layout, replaced);
}

/** One policy's values protected one by one, refused as the engine refuses their batch. */
function protectEach(protection: ValueProtection, group: ValueGroup, maxValueBytes: number): string[] {
  const { texts, policy } = group;
  // The proxy's bound comes first, over the whole group, as boundValueLength does.
  if (protection.method === 'fpe' || protection.method === 'tokenise') {
    for (const text of texts) if (isLongerThan(text, maxValueBytes)) throw protectionRefusal(policy, valueTooLong(maxValueBytes));
  }
  const out: string[] = new Array<string>(texts.length);
  let failure: unknown;
  let invalidValue = false;
  for (let i = 0; i < texts.length; i++) {
    try {
      out[i] = protection.protect(texts[i] as string);
    } catch (error) {
      // A batch reports invalid values before values too short to encrypt: keep the error it would give.
      const invalid = error instanceof ProtectionError && error.code === 'invalid_value';
      if (failure === undefined || (invalid && !invalidValue)) {
        failure = error;
        invalidValue = invalid;
      }
    }
  }
  if (failure !== undefined) throw protectionRefusal(policy, failure);
  return out;
}

/** The values of one policy, each with the parameter it came from and how it was sent. */
interface ValueGroup {
  readonly policy: ColumnPolicy;
  readonly texts: string[];
  readonly indexes: number[];
  /** Per value: the type its binary form is written in; -1 for a value sent as text. */
  readonly binaryTypes: number[];
}

/**
 * Where scalarGroups reads the values: an array of them, or the Bind frame they still lie in
 * (a text value is then decoded where it lies, with no Buffer made for it).
 */
type ScalarValues = readonly BindValue[] | { readonly frame: Buffer; readonly layout: BindValueLayout };

/** The scalar parameters' values, read as text and grouped by policy in order of first use. */
function scalarGroups(
  scalars: readonly ScalarParam[], values: ScalarValues, paramFormats: readonly number[], paramTypes: readonly number[], style: DateStyle,
): ValueGroup[] {
  const groups: ValueGroup[] = [];
  const inFrame = Array.isArray(values) ? undefined : values as Exclude<ScalarValues, readonly BindValue[]>;
  for (const { index, plan } of scalars) {
    const binary = formatAt(paramFormats, index) === 1;
    const declared = paramTypes[index] ?? 0;
    const type = declared !== 0 ? declared : plan.columnType;
    let text: string | undefined;
    if (inFrame === undefined) {
      const value = (values as readonly BindValue[])[index];
      if (value === undefined) throw missingValueRefusal(plan.policy, index + 1);
      if (value === null || typeof value === 'string') continue;
      text = binary ? decodeBinary(type, value) : normaliseText(plan.columnType, value.toString('utf8'), style);
    } else {
      const { frame, layout } = inFrame;
      if (index >= layout.starts.length) throw missingValueRefusal(plan.policy, index + 1);
      const start = layout.starts[index] as number;
      const length = layout.lengths[index] as number;
      if (length < 0) continue;
      text = binary ? decodeBinary(type, frame.subarray(start, start + length)) : normaliseText(plan.columnType, frame.toString('utf8', start, start + length), style);
    }
    if (text === undefined) throw valueRefusal(plan.policy, `a binary value of ${typeName(type)} cannot be read; send it in text format`);
    let group: ValueGroup | undefined;
    for (const known of groups) if (known.policy === plan.policy) group = known;
    if (group === undefined) {
      // Arrays of the first value, not empty ones: a first push reserves room for 17.
      groups.push({ policy: plan.policy, texts: [text], indexes: [index], binaryTypes: [binary ? type : -1] });
      continue;
    }
    group.texts.push(text);
    group.indexes.push(index);
    group.binaryTypes.push(binary ? type : -1);
  }
  return groups;
}

function placeProtected(group: ValueGroup, protectedTexts: readonly string[], values: (BindValue | undefined)[]): void {
  // A short answer must never leave a parameter as it was sent (or as NULL): fail closed.
  if (protectedTexts.length !== group.indexes.length) throw new Error('the engine answered a different number of values than it was given');
  for (let i = 0; i < group.indexes.length; i++) {
    const text = protectedTexts[i] as string;
    if (typeof text !== 'string') throw new Error('the engine answered a value that is not text');
    const type = group.binaryTypes[i] as number;
    if (type < 0) {
      values[group.indexes[i] as number] = text; // written as UTF-8 into the frame
      continue;
    }
    const encoded = encodeBinary(type, text);
    if (encoded === undefined) throw valueRefusal(group.policy, `the protected value does not fit ${typeName(type)}`);
    values[group.indexes[i] as number] = encoded;
  }
}

/** A statement with an array parameter: its elements are protected one by one, in their array's format. */
async function rewriteWithArrays(
  frame: Buffer, bind: BindMessage, statement: BoundStatement, engine: Engine, style: DateStyle,
  values: BindValue[], paramFormats: readonly number[], changed: boolean,
): Promise<Buffer> {
  const { params, paramTypes } = statement;
  const batch = new ProtectionBatch();
  for (const [param, plan] of params) {
    const index = param - 1;
    const value = values[index];
    if (value === undefined) throw missingValueRefusal(plan.policy, param);
    if (value === null || typeof value === 'string') continue;
    const binary = formatAt(paramFormats, index) === 1;
    const declared = paramTypes[index] ?? 0;
    const { policy } = plan;
    if (!plan.array) {
      const type = declared !== 0 ? declared : plan.columnType;
      const text = binary ? decodeBinary(type, value) : normaliseText(plan.columnType, value.toString('utf8'), style);
      if (text === undefined) throw valueRefusal(policy, `a binary value of ${typeName(type)} cannot be read; send it in text format`);
      batch.add(policy, text, (protectedText) => {
        const encoded = binary ? encodeBinary(type, protectedText) : Buffer.from(protectedText, 'utf8');
        if (encoded === undefined) throw valueRefusal(policy, `the protected value does not fit ${typeName(type)}`);
        values[index] = encoded;
      });
      continue;
    }
    if (!binary) {
      const elements = parseTextArray(value.toString('utf8'));
      if (elements === undefined) throw valueRefusal(policy, `parameter $${param} is not a one-dimensional array`);
      const out = [...elements];
      elements.forEach((element, i) => {
        if (element === null) return;
        batch.add(policy, normaliseText(plan.columnType, element, style), (protectedText) => {
          out[i] = protectedText;
          values[index] = Buffer.from(formatTextArray(out), 'utf8');
        });
      });
      continue;
    }
    const array = parseBinaryArray(value);
    if (array === undefined) throw valueRefusal(policy, `parameter $${param} is not a one-dimensional array`);
    const elementType = array.elementType !== 0 ? array.elementType : ARRAY_ELEMENT_TYPES.get(declared) ?? plan.columnType;
    const out = [...array.elements];
    array.elements.forEach((element, i) => {
      if (element === null) return;
      const text = decodeBinary(elementType, element);
      if (text === undefined) throw valueRefusal(policy, `a binary array element of ${typeName(elementType)} cannot be read; send it in text format`);
      batch.add(policy, text, (protectedText) => {
        const encoded = encodeBinary(elementType, protectedText);
        if (encoded === undefined) throw valueRefusal(policy, `the protected value does not fit ${typeName(elementType)}`);
        out[i] = encoded;
        values[index] = formatBinaryArray({ ...array, elements: out });
      });
    });
  }
  if (batch.size === 0 && !changed) return frame;
  if (batch.size > 0) await batch.run(engine);
  return bindFrame(bind, paramFormats, values);
}

/**
 * The client's values with each parameter pgveil appended carrying its source's value (and
 * format). A Bind with another count than the client's statement has is left as sent, for the
 * server to refuse; a protected parameter it carries no value for is refused here.
 */
function withExtraParams(bind: BindMessage, statement: BoundStatement, plan: BindPlan): { values: BindValue[]; paramFormats: readonly number[] } {
  const values: BindValue[] = bind.values.slice();
  if (plan.extras.length === 0 || values.length !== statement.clientParamCount) return { values, paramFormats: bind.paramFormats };
  const formats = [...bind.paramFormats];
  const perValue = formats.length > 1;
  for (const [param, source] of plan.extras) {
    values[param - 1] = bind.values[source - 1] ?? null;
    if (perValue) formats[param - 1] = bind.paramFormats[source - 1] ?? 0;
  }
  return { values, paramFormats: formats };
}
