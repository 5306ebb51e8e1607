import { isMap, isScalar, isSeq, parseDocument, YAMLSeq } from 'yaml';
import { normaliseEmail } from './accountsSection.js';
import type { AccountConfig } from './configTypes.js';

export class AccountExistsError extends Error {
  override readonly name = 'AccountExistsError';
}

/**
 * Appends an account to configuration text, keeping the file's comments and layout.
 * The account carries hashes only; the caller shows the secrets once and forgets them.
 */
export function addAccountToConfigText(text: string, account: AccountConfig): string {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) throw new Error('the configuration file is not valid YAML; fix it first');
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw new Error('the configuration file must be a mapping of sections');
  }
  let seq = doc.get('accounts', true);
  if (seq === undefined || seq === null || (isScalar(seq) && seq.value === null)) {
    seq = new YAMLSeq();
    doc.set('accounts', seq);
  }
  if (!isSeq(seq)) throw new Error('accounts in the configuration file must be a list');
  const email = normaliseEmail(account.email);
  for (const item of seq.items) {
    if (isMap(item) && normaliseEmail(String(item.get('email') ?? '')) === email) {
      throw new AccountExistsError(`an account with this email already exists: ${email}`);
    }
  }
  seq.flow = false;
  const node = doc.createNode({
    email,
    passwordHash: account.passwordHash,
    apiKeyHash: account.apiKeyHash,
    roles: account.roles,
    enabled: account.enabled,
  });
  const roles = node.get('roles', true);
  if (isSeq(roles)) roles.flow = true;
  seq.items.push(node);
  return doc.toString({ lineWidth: 0 });
}
