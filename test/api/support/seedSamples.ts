import type { Kind } from '../../../src/engine/types.js';

/** Two values per kind in the input shapes of the seed's per-kind table. */
export const SEED_SAMPLES: Readonly<Record<Kind, readonly [string, string]>> = {
  address: ['221B Baker Street, London', '1600 Amphitheatre Parkway'],
  uuid: ['f47ac10b-58cc-4372-a567-0e02b2c3d479', '123e4567-e89b-42d3-a456-426614174000'],
  text: ['Call me back tomorrow at noon.', 'The quick brown fox'],
  phone: ['+1 555-010-4477', '+44 20 7946 0958'],
  ipv4: ['192.168.10.4', '10.20.30.40'],
  ssn: ['123-45-6789', '078-05-1120'],
  price: ['$1,234.56', '$99.95'],
  date: ['12/31/2024', '02/29/2000'],
  latlng: ['-33.868820', '151.209296'],
  name: ['Jane Doe', 'Alexander Hamilton'],
  city: ['Sydney', 'San Francisco'],
  email: ['jane.doe@example.com', 'alex.h@mail.example.org'],
  ccn: ['4111 1111 1111 1111', '5500 0000 0000 0004'],
  numeric: ['1234567', '987654321'],
};

/** Values that are not of the kind (protect answers 422 with their indexes). */
export const NOT_OF_KIND: Readonly<Partial<Record<Kind, string>>> = {
  ssn: 'hello',
  ccn: 'hello',
  ipv4: '300.1.1.1',
  date: '02/30/2024',
  uuid: 'not-a-uuid',
  email: 'not an email',
  numeric: 'twelve',
};
