/** What a refused statement rejects with, as `pg` reports it. */
export interface Failure {
  code?: string;
  message: string;
}

/** Runs `run` and returns its error; a run that succeeds fails the test. */
export async function failure(run: () => Promise<unknown>): Promise<Failure> {
  try {
    await run();
  } catch (error) {
    return error as Failure;
  }
  throw new Error('expected a refusal');
}
