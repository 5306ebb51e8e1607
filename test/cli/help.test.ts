import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureIo } from './support/cliHarness.js';

const COMMANDS = ['demo', 'serve', 'account add', 'keys generate', 'policy check', 'policy suggest', 'protect-table', 'rekey'];

describe('pgveil --help', () => {
  it('lists every command with what it does, and exits 0', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    const text = io.stdout.join('');
    for (const command of COMMANDS) expect(text).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
  });

  it.each(COMMANDS)('%s --help prints its usage and examples, runs nothing and exits 0', async (command) => {
    const io = captureIo();
    expect(await main([...command.split(' '), '--help'], io)).toBe(0);
    const text = io.stdout.join('');
    expect(text).toContain(`Usage: pgveil ${command}`);
    expect(text).toMatch(new RegExp(`Examples:\\n  pgveil ${command}`));
    expect(io.stderr.join('')).toBe('');
  });

  it('still refuses an unknown command with exit 2', async () => {
    const io = captureIo();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.stderr.join('')).toContain('unknown command');
  });
});
