import { expect, it, vi } from 'vitest';

/** The socket addon's module loaded afresh with PGVEIL_NATIVE set to `native` (undefined: unset). */
async function socketAddonWith(native: string | undefined): Promise<typeof import('../../src/proxy/nativeSockets/socketAddon.js')> {
  vi.resetModules();
  const previous = process.env.PGVEIL_NATIVE;
  if (native === undefined) delete process.env.PGVEIL_NATIVE;
  else process.env.PGVEIL_NATIVE = native;
  try {
    return await import('../../src/proxy/nativeSockets/socketAddon.js');
  } finally {
    if (previous === undefined) delete process.env.PGVEIL_NATIVE;
    else process.env.PGVEIL_NATIVE = previous;
  }
}

it('is loaded where npm ci built it, and says so', async () => {
  const { socketAddon, socketAddonStatus } = await socketAddonWith(undefined);
  expect(socketAddonStatus).toBe('loaded');
  expect(typeof socketAddon?.adopt).toBe('function');
});

it('is off under PGVEIL_NATIVE=0, and says why', async () => {
  const { socketAddon, socketAddonStatus } = await socketAddonWith('0');
  expect(socketAddonStatus).toBe('disabled');
  expect(socketAddon).toBeUndefined();
});

it('reads as off in the startup line when the configuration turns it off, else as its status', async () => {
  const { socketAddonStatus, socketIoStatus } = await socketAddonWith(undefined);
  expect(socketIoStatus(false)).toBe('off (proxy.nativeSocketIo: false)');
  expect(socketIoStatus(true)).toBe(socketAddonStatus);
});
