import { describe, expect, it } from 'vitest';
import { progressLine } from '../../src/cli/policySuggest.js';

describe('policy suggest progress line', () => {
  it('redraws one line of counts on a terminal and ends it after the last table', () => {
    const written: string[] = [];
    const onTable = progressLine({ isTTY: true, write: (text) => written.push(text) });
    onTable?.(1, 3);
    onTable?.(3, 3);
    expect(written).toEqual(['\r\u001b[Ksampled 1 of 3 tables', '\r\u001b[Ksampled 3 of 3 tables\n']);
  });

  it('writes nothing when stderr is not a terminal, or not the process\'s own', () => {
    expect(progressLine({ isTTY: false, write: () => { throw new Error('written'); } })).toBeUndefined();
    expect(progressLine({ write: () => { throw new Error('written'); } })).toBeUndefined();
    expect(progressLine(undefined)).toBeUndefined();
  });
});
