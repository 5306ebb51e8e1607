import type { Kind } from '../types.js';
import type { KindHandler } from './kind.js';
import { addressKind } from './address.js';
import { ccnKind } from './ccn.js';
import { cityKind } from './city.js';
import { dateKind } from './date.js';
import { emailKind } from './email.js';
import { ipv4Kind } from './ipv4.js';
import { latlngKind } from './latlng.js';
import { nameKind } from './name.js';
import { numericKind } from './numeric.js';
import { phoneKind } from './phone.js';
import { priceKind } from './price.js';
import { ssnKind } from './ssn.js';
import { textKind } from './text.js';
import { uuidKind } from './uuid.js';

/** One handler per kind; the type makes a missing kind a compile error. */
export const KIND_HANDLERS: Readonly<Record<Kind, KindHandler>> = {
  address: addressKind,
  uuid: uuidKind,
  text: textKind,
  phone: phoneKind,
  ipv4: ipv4Kind,
  ssn: ssnKind,
  price: priceKind,
  date: dateKind,
  latlng: latlngKind,
  name: nameKind,
  city: cityKind,
  email: emailKind,
  ccn: ccnKind,
  numeric: numericKind,
};
