/**
 * The write path for Bind: each parameter value that feeds a protected column is protected with
 * the column's policy, in text or binary format, arrays (`col = ANY($n)`) element by element.
 * All values of one policy go to the engine in one call.
 */
import type { Engine } from '../../../engine/index.js';
import { formatBinaryArray, formatTextArray, parseBinaryArray, parseTextArray } from '../valueCodecs/arrayCodecs.js';
import { valueRefusal } from '../policyRefusal.js';
import type { ParamPlan } from './statementRewriter.js';
import { ARRAY_ELEMENT_TYPES, decodeBinary, encodeBinary } from '../valueCodecs/valueCodecs.js';
import { ProtectionBatch } from './valueProtector.js';
import type { DateStyle } from '../valueCodecs/dateStyle.js';
import { normaliseText } from './normaliseText.js';
import { formatAt, type BindMessage } from '../../protocol/messageReaders.js';
import { bindMessage } from '../../protocol/messages.js';

function typeName(oid: number): string {
  return oid === 0 ? 'unknown type' : `type ${oid}`;
}

/**
 * Returns the Bind to forward (the same frame when no parameter needs protecting). `paramTypes`
 * are the statement's parameter types as declared in Parse or reported by ParameterDescription.
 */
export async function rewriteBind(frame: Buffer, bind: BindMessage, statement: BoundStatement, engine: Engine, style: DateStyle): Promise<Buffer> {
  const { params, paramTypes } = statement;
  const { values, paramFormats } = withExtraParams(bind, statement);
  const batch = new ProtectionBatch();
  for (const [param, plan] of params) {
    const index = param - 1;
    const value = values[index];
    if (value === null || value === undefined) continue;
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
  if (batch.size === 0 && values.length === bind.values.length) return frame;
  if (batch.size > 0) await batch.run(engine);
  return bindMessage({ ...bind, paramFormats, values });
}

export interface BoundStatement {
  readonly params: ReadonlyMap<number, ParamPlan>;
  readonly paramTypes: readonly number[];
  readonly extraParams?: ReadonlyMap<number, number>;
  readonly clientParamCount?: number;
}

/**
 * The client's values with each parameter pgveil appended carrying its source's value (and
 * format). A Bind with another count than the client's statement has is left as sent: the server
 * refuses it.
 */
function withExtraParams(bind: BindMessage, statement: BoundStatement): { values: (Buffer | null)[]; paramFormats: readonly number[] } {
  const extra = statement.extraParams;
  const values = [...bind.values];
  if (extra === undefined || extra.size === 0 || values.length !== statement.clientParamCount) return { values, paramFormats: bind.paramFormats };
  const formats = [...bind.paramFormats];
  const perValue = formats.length > 1;
  for (const [param, source] of [...extra].sort(([a], [b]) => a - b)) {
    values[param - 1] = bind.values[source - 1] ?? null;
    if (perValue) formats[param - 1] = bind.paramFormats[source - 1] ?? 0;
  }
  return { values, paramFormats: formats };
}
