/**
 * Realistic demo customers, generated from a fixed seed so every fresh demo holds the same rows
 * (and tests can recompute them). Every value is valid for its kind and column type: names and
 * cities in their own script, real dates, Luhn-valid cards, public IPv4 addresses, uuid v4.
 */

export interface DemoCustomer {
  full_name: string;
  email: string;
  ssn: string;
  phone: string;
  card_number: string;
  /** ISO YYYY-MM-DD. */
  birth_date: string;
  city: string;
  ip_address: string;
  external_id: string;
}

export const DEMO_ROW_COUNT = 300;
const SEED = 0x5eed_d3;

/** mulberry32: small, fast, and the same sequence on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A name in its script and its Latin spelling (for the e-mail address). */
type Name = readonly [native: string, latin: string];

interface Locale {
  given: readonly Name[];
  family: readonly Name[];
  /** CJK names are written without a space, family name first. */
  join: (given: string, family: string) => string;
  /** The family name as it agrees with the given name (Russian: Петров, Петрова). */
  agree?: (given: Name, family: Name) => Name;
  cities: readonly string[];
  domains: readonly string[];
  /** A phone number in the country's usual layout, from `d(n)`: n random digits. */
  phone: (d: (n: number) => string, int: (min: number, max: number) => number) => string;
}

const western = (given: string, family: string): string => `${given} ${family}`;
const eastern = (given: string, family: string): string => `${family}${given}`;
const latin = (names: string): readonly Name[] => names.split(',').map((n) => [n, n] as const);
const pairs = (names: string): readonly Name[] => names.split(',').map((n) => n.split('=') as unknown as Name);

const LOCALES: Record<string, Locale> = {
  en: {
    given: latin('James,Mary,Robert,Patricia,Michael,Jennifer,David,Linda,Emily,Daniel,Olivia,Ethan,Grace,Noah,Chloe,Samuel'),
    family: latin('Smith,Johnson,Williams,Brown,Jones,Miller,Davis,Wilson,Anderson,Taylor,Thomas,Moore,Martin,Clark,Walker,Young'),
    join: western,
    cities: ['New York', 'Chicago', 'Seattle', 'Austin', 'Boston', 'Denver', 'London', 'Manchester', 'Toronto', 'Sydney'],
    domains: ['example.com', 'mail.example.org', 'example.co.uk'],
    phone: (d, int) => `+1 (${int(2, 9)}${d(2)}) 555-01${d(2)}`,
  },
  de: {
    given: pairs('Jürgen=Juergen,Anna=Anna,Lukas=Lukas,Sophie=Sophie,Matthias=Matthias,Jana=Jana,Günter=Guenter,Lea=Lea'),
    family: pairs('Müller=Mueller,Schmidt=Schmidt,Schneider=Schneider,Fischer=Fischer,Weiß=Weiss,Becker=Becker,Schäfer=Schaefer,Koch=Koch'),
    join: western,
    cities: ['München', 'Berlin', 'Köln', 'Hamburg', 'Zürich', 'Düsseldorf', 'Wien'],
    domains: ['example.de', 'post.example.de'],
    phone: (d) => `+49 30 ${d(8)}`,
  },
  fr: {
    given: pairs('Amélie=Amelie,Jérôme=Jerome,Camille=Camille,Hélène=Helene,François=Francois,Chloé=Chloe,Léo=Leo'),
    family: pairs('Martin=Martin,Lefèvre=Lefevre,Dubois=Dubois,Moreau=Moreau,Girard=Girard,Rousseau=Rousseau,Faure=Faure'),
    join: western,
    cities: ['Paris', 'Lyon', 'Marseille', 'Montréal', 'Genève', 'Orléans'],
    domains: ['example.fr'],
    phone: (d) => `+33 1 ${d(2)} ${d(2)} ${d(2)} ${d(2)}`,
  },
  es: {
    given: pairs('María José=Maria.Jose,José=Jose,Lucía=Lucia,Álvaro=Alvaro,Sofía=Sofia,Javier=Javier,Inés=Ines'),
    family: pairs('García=Garcia,Fernández=Fernandez,López=Lopez,Martínez=Martinez,Sánchez=Sanchez,Muñoz=Munoz,Pérez=Perez'),
    join: western,
    cities: ['Madrid', 'Sevilla', 'Málaga', 'Barcelona', 'Ciudad de México', 'Bogotá'],
    domains: ['example.es', 'example.mx'],
    phone: (d) => `+34 ${d(3)} ${d(3)} ${d(3)}`,
  },
  it: {
    given: latin('Giulia,Marco,Francesca,Luca,Chiara,Alessandro,Martina'),
    family: latin('Rossi,Russo,Ferrari,Esposito,Bianchi,Romano,Colombo'),
    join: western,
    cities: ['Roma', 'Milano', 'Napoli', 'Torino', 'Bologna'],
    domains: ['example.it'],
    phone: (d) => `+39 06 ${d(4)} ${d(4)}`,
  },
  pt: {
    given: pairs('João=Joao,Ana=Ana,Thiago=Thiago,Beatriz=Beatriz,Conceição=Conceicao'),
    family: pairs('Silva=Silva,Santos=Santos,Gonçalves=Goncalves,Araújo=Araujo,Ribeiro=Ribeiro'),
    join: western,
    cities: ['São Paulo', 'Lisboa', 'Porto', 'Belo Horizonte', 'Brasília'],
    domains: ['example.com.br', 'example.pt'],
    phone: (d) => `+55 11 9${d(4)}-${d(4)}`,
  },
  ru: {
    given: pairs('Ольга=Olga,Дмитрий=Dmitry,Наталья=Natalya,Алексей=Alexey,Екатерина=Ekaterina,Сергей=Sergey'),
    family: pairs('Петров=Petrov,Иванов=Ivanov,Смирнов=Smirnov,Кузнецов=Kuznetsov,Соколов=Sokolov,Попов=Popov'),
    join: western,
    agree: ([given], [family, familyLatin]) => (/[ая]$/.test(given) ? [`${family}а`, `${familyLatin}a`] : [family, familyLatin]),
    cities: ['Москва', 'Санкт-Петербург', 'Новосибирск', 'Казань', 'Екатеринбург'],
    domains: ['example.ru'],
    phone: (d) => `+7 495 ${d(3)}-${d(2)}-${d(2)}`,
  },
  ar: {
    given: pairs('محمد=Mohamed,فاطمة=Fatima,أحمد=Ahmed,ليلى=Layla,يوسف=Youssef,مريم=Maryam'),
    family: pairs('علي=Ali,حسن=Hassan,منصور=Mansour,خليل=Khalil,سالم=Salem,عمر=Omar'),
    join: western,
    cities: ['القاهرة', 'عمّان', 'دبي', 'الرياض', 'الإسكندرية'],
    domains: ['example.eg', 'example.ae'],
    phone: (d) => `+20 10 ${d(4)} ${d(4)}`,
  },
  hi: {
    given: pairs('प्रिया=Priya,अर्जुन=Arjun,अनन्या=Ananya,राहुल=Rahul,दीपिका=Deepika,विकास=Vikas'),
    family: pairs('शर्मा=Sharma,वर्मा=Verma,पटेल=Patel,गुप्ता=Gupta,सिंह=Singh,जोशी=Joshi'),
    join: western,
    cities: ['मुंबई', 'दिल्ली', 'जयपुर', 'पुणे', 'लखनऊ'],
    domains: ['example.in'],
    phone: (d) => `+91 9${d(4)} ${d(5)}`,
  },
  ja: {
    given: pairs('花子=hanako,太郎=taro,陽菜=hina,蓮=ren,美咲=misaki,翔太=shota'),
    family: pairs('佐藤=sato,鈴木=suzuki,高橋=takahashi,田中=tanaka,渡辺=watanabe,伊藤=ito'),
    join: eastern,
    cities: ['東京', '大阪', '京都', '横浜', '札幌'],
    domains: ['example.jp', 'mail.example.co.jp'],
    phone: (d) => `+81 3-${d(4)}-${d(4)}`,
  },
  ko: {
    given: pairs('민준=minjun,서연=seoyeon,지훈=jihoon,하은=haeun,도윤=doyun'),
    family: pairs('김=kim,이=lee,박=park,최=choi,정=jung'),
    join: eastern,
    cities: ['서울', '부산', '인천', '대구', '광주'],
    domains: ['example.kr'],
    phone: (d) => `+82 10-${d(4)}-${d(4)}`,
  },
  zh: {
    given: pairs('伟=wei,芳=fang,静=jing,磊=lei,秀英=xiuying,子涵=zihan'),
    family: pairs('王=wang,李=li,张=zhang,刘=liu,陈=chen,杨=yang'),
    join: eastern,
    cities: ['北京', '上海', '广州', '深圳', '成都'],
    domains: ['example.cn'],
    phone: (d) => `+86 138 ${d(4)} ${d(4)}`,
  },
};

/** Mostly Latin-script customers, with the other scripts spread through the first rows too. */
const ROTATION = ['en', 'ru', 'de', 'ja', 'es', 'en', 'hi', 'fr', 'ar', 'ko', 'en', 'it', 'zh', 'pt', 'en', 'de'];

function luhnCheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

export function generateDemoRows(count = DEMO_ROW_COUNT, seed = SEED): DemoCustomer[] {
  const next = random(seed);
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  const digits = (n: number): string => Array.from({ length: n }, () => String(int(0, 9))).join('');
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  const emails = new Set<string>();

  const card = (): string => {
    const prefix = pick(['4', '51', '52', '53', '54', '55', '6011']);
    const body = prefix + digits(15 - prefix.length);
    return `${body}${luhnCheckDigit(body)}`.replace(/(\d{4})(?=\d)/g, '$1 ');
  };
  const ssn = (): string => {
    let area = int(1, 899);
    if (area === 666) area = 665; // never issued
    return `${pad(area, 3)}-${pad(int(1, 99), 2)}-${pad(int(1, 9999), 4)}`;
  };
  const birthDate = (): string => {
    const day = new Date(Date.UTC(1940, 0, 1) + int(0, 65 * 365) * 86_400_000);
    return day.toISOString().slice(0, 10);
  };
  const publicIpv4 = (): string => {
    for (;;) {
      const [a, b] = [int(1, 223), int(0, 255)];
      const reserved = a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a === 100;
      if (!reserved) return `${a}.${b}.${int(0, 255)}.${int(1, 254)}`;
    }
  };
  const uuidV4 = (): string => {
    const bytes = Array.from({ length: 16 }, () => int(0, 255));
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };

  const rows: DemoCustomer[] = [];
  for (let i = 0; i < count; i++) {
    const locale = LOCALES[ROTATION[i % ROTATION.length] as string] as Locale;
    const givenName = pick(locale.given);
    const [given, givenLatin] = givenName;
    const familyName = pick(locale.family);
    const [family, familyLatin] = locale.agree ? locale.agree(givenName, familyName) : familyName;
    const local = `${givenLatin}.${familyLatin}`.toLowerCase();
    let email = `${local}@${pick(locale.domains)}`;
    for (let n = 2; emails.has(email); n++) email = email.replace(/^[^@]*/, `${local}${n}`);
    emails.add(email);
    rows.push({
      full_name: locale.join(given, family),
      email,
      ssn: ssn(),
      phone: locale.phone(digits, int),
      card_number: card(),
      birth_date: birthDate(),
      city: pick(locale.cities),
      ip_address: publicIpv4(),
      external_id: uuidV4(),
    });
  }
  return rows;
}
