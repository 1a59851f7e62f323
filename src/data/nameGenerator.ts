// Realistic full names per name locale, from faker-js or our own lists; loaded on first use (its data is large).
import {
  Faker,
  generateMersenne53Randomizer,
  type LocaleDefinition,
  type PersonDefinition,
  type Randomizer,
  az, base, cs_CZ, da, de, de_AT, de_CH, en, en_GH, en_IN, en_NG, en_US, es, es_MX, fi, fr, fr_BE,
  fr_CA, fr_CH, hr, hu, id_ID, it, lv, nb_NO, nl, nl_BE, pl, pt_BR, pt_PT, ro, sk, sl_SI, sv, tr, uz_UZ_latin, vi,
  yo_NG, zu_ZA,
} from '@faker-js/faker';
import { isNameLocale, resolveNameLocales } from './nameLocales.ts';
import { ALL_NAME_LOCALES, type NameLocale } from '../contracts/catalogue.ts';

// Name lists of our own for the codes faker-js ships no locale for; common given names and surnames.
function people(
  female: readonly string[],
  male: readonly string[],
  lastNames: readonly string[] | { female: readonly string[]; male: readonly string[] },
): LocaleDefinition {
  const person: PersonDefinition = {
    first_name: { female: [...female], male: [...male] },
    last_name: 'female' in lastNames ? { female: [...lastNames.female], male: [...lastNames.male] } : { generic: [...lastNames] },
  };
  return { person };
}

const OWN_NAMES = {
  kenya: people(
    ['Wanjiru', 'Akinyi', 'Achieng', 'Njeri', 'Wambui', 'Nafula', 'Chebet', 'Atieno', 'Nyambura', 'Jepkosgei', 'Faith', 'Mercy'],
    ['Kamau', 'Otieno', 'Mwangi', 'Kiprono', 'Ochieng', 'Wafula', 'Kibet', 'Njoroge', 'Brian', 'Collins', 'Dennis', 'Emmanuel'],
    ['Kamau', 'Mwangi', 'Otieno', 'Odhiambo', 'Kariuki', 'Njoroge', 'Kiprotich', 'Cheruiyot', 'Wekesa', 'Mutua', 'Kilonzo',
      'Onyango', 'Ouma', 'Chege', 'Ndungu', 'Omondi', 'Wambua', 'Koech'],
  ),
  swahili: people(
    ['Amani', 'Neema', 'Zawadi', 'Rehema', 'Halima', 'Mwanaisha', 'Subira', 'Upendo', 'Saida', 'Asha', 'Zuhura', 'Mwajuma'],
    ['Baraka', 'Juma', 'Hamisi', 'Bakari', 'Salim', 'Jabari', 'Rashidi', 'Athumani', 'Musa', 'Hassani', 'Shabani', 'Idrisa'],
    ['Mwakyusa', 'Mushi', 'Massawe', 'Kimaro', 'Lyimo', 'Swai', 'Mrema', 'Mbwana', 'Shirima', 'Magesa', 'Mollel', 'Msuya',
      'Mfinanga', 'Kombo', 'Makame', 'Mwinyi'],
  ),
  algeria: people(
    ['Amina', 'Yasmine', 'Lina', 'Sarah', 'Imane', 'Nour', 'Meriem', 'Lydia', 'Kenza', 'Samira', 'Nesrine', 'Amel'],
    ['Mohamed', 'Karim', 'Yacine', 'Amine', 'Sofiane', 'Rachid', 'Mehdi', 'Riad', 'Bilal', 'Walid', 'Nassim', 'Farid'],
    ['Benali', 'Bouzid', 'Haddad', 'Belkacem', 'Saidi', 'Mansouri', 'Cherif', 'Brahimi', 'Khelifi', 'Rahmani', 'Hamidi',
      'Meziane', 'Zerrouki', 'Bensalah', 'Benaissa', 'Touati', 'Larbi', 'Kaci'],
  ),
  hausa: people(
    ['Aisha', 'Fatima', 'Hauwa', 'Zainab', 'Hadiza', 'Amina', 'Maryam', 'Halima', 'Bilkisu', 'Rakiya', 'Safiya', 'Jamila'],
    ['Abubakar', 'Musa', 'Ibrahim', 'Usman', 'Sani', 'Aliyu', 'Bello', 'Yusuf', 'Garba', 'Lawal', 'Nasiru', 'Shehu'],
    ['Abdullahi', 'Bello', 'Musa', 'Ibrahim', 'Suleiman', 'Danjuma', 'Garba', 'Lawal', 'Aminu', 'Yakubu', 'Sani', 'Mohammed',
      'Umar', 'Dikko', 'Idris', 'Tanko'],
  ),
  igbo: people(
    ['Chiamaka', 'Ngozi', 'Adaeze', 'Chioma', 'Nneka', 'Ifeoma', 'Amarachi', 'Obiageli', 'Chinenye', 'Uju', 'Nkechi', 'Ebere'],
    ['Chinedu', 'Emeka', 'Obinna', 'Ikenna', 'Chukwuemeka', 'Nnamdi', 'Kelechi', 'Chidi', 'Ifeanyi', 'Uchenna', 'Tobenna', 'Ebuka'],
    ['Okafor', 'Okeke', 'Eze', 'Nwosu', 'Obi', 'Okonkwo', 'Nwankwo', 'Onyeka', 'Chukwu', 'Ibe', 'Uzor', 'Nwachukwu',
      'Anyanwu', 'Ezeh', 'Okoye', 'Udeh'],
  ),
  pakistan: people(
    ['Ayesha', 'Fatima', 'Zainab', 'Hira', 'Sana', 'Mahnoor', 'Amna', 'Iqra', 'Maryam', 'Sadia', 'Rabia', 'Nida'],
    ['Muhammad', 'Ali', 'Hamza', 'Usman', 'Bilal', 'Ahmed', 'Hassan', 'Imran', 'Faisal', 'Zeeshan', 'Asad', 'Saad'],
    ['Khan', 'Malik', 'Qureshi', 'Chaudhry', 'Butt', 'Sheikh', 'Siddiqui', 'Hussain', 'Raza', 'Mirza', 'Abbasi', 'Baig',
      'Javed', 'Iqbal', 'Rana', 'Awan', 'Shah', 'Akhtar'],
  ),
  thailand: people(
    ['Siriporn', 'Kanya', 'Pimchanok', 'Nattaya', 'Malee', 'Supaporn', 'Ratana', 'Wanida', 'Chanida', 'Orathai', 'Sasithorn',
      'Kamonwan'],
    ['Somchai', 'Somsak', 'Anan', 'Prasert', 'Thanawat', 'Kittisak', 'Nattapong', 'Wichai', 'Chaiwat', 'Surasak',
      'Pongsakorn', 'Apichat'],
    ['Saetang', 'Srisuk', 'Wongsawat', 'Chaiyaporn', 'Rattanakul', 'Boonmee', 'Kittikorn', 'Suwannarat', 'Thongchai',
      'Phromma', 'Charoensuk', 'Sukprasert', 'Jaidee', 'Sirichai', 'Kaewmanee', 'Srisawat'],
  ),
  britain: people(
    ['Olivia', 'Amelia', 'Isla', 'Ava', 'Emily', 'Sophie', 'Grace', 'Charlotte', 'Poppy', 'Lucy', 'Eleanor', 'Hannah'],
    ['Oliver', 'George', 'Harry', 'Jack', 'Thomas', 'James', 'William', 'Charlie', 'Oscar', 'Alfie', 'Henry', 'Samuel'],
    ['Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Johnson', 'Davies', 'Robinson', 'Wright', 'Thompson',
      'Evans', 'Walker', 'White', 'Roberts', 'Green', 'Hall', 'Wood', 'Hughes', 'Clarke'],
  ),
  newZealand: people(
    ['Olivia', 'Isla', 'Charlotte', 'Amelia', 'Mia', 'Harper', 'Ruby', 'Aroha', 'Mere', 'Maia', 'Ana', 'Lucy'],
    ['Oliver', 'Jack', 'Noah', 'Leo', 'George', 'Hunter', 'Mason', 'Nikau', 'Tama', 'Wiremu', 'Ari', 'Lachlan'],
    ['Smith', 'Wilson', 'Williams', 'Brown', 'Taylor', 'Jones', 'Walker', 'Thompson', 'Anderson', 'Campbell', 'Stewart',
      'Ngata', 'Parata', 'Tipene', 'Henare', 'Tawhiri'],
  ),
  catalonia: people(
    ['Montserrat', 'Núria', 'Laia', 'Marta', 'Mireia', 'Anna', 'Júlia', 'Carla', 'Meritxell', 'Roser', 'Aina', 'Neus'],
    ['Jordi', 'Joan', 'Pere', 'Josep', 'Marc', 'Pau', 'Oriol', 'Arnau', 'Xavier', 'Albert', 'Jaume', 'Pol'],
    ['Puig', 'Vila', 'Ferrer', 'Serra', 'Soler', 'Font', 'Roca', 'Vidal', 'Casals', 'Prat', 'Pujol', 'Riera', 'Sala',
      'Bosch', 'Coll', 'Mas', 'Giralt', 'Rovira'],
  ),
  ireland: people(
    ['Aoife', 'Siobhán', 'Niamh', 'Ciara', 'Sinéad', 'Orla', 'Clodagh', 'Saoirse', 'Gráinne', 'Róisín', 'Emma', 'Sarah'],
    ['Seán', 'Conor', 'Cian', 'Darragh', 'Eoin', 'Ciarán', 'Pádraig', 'Niall', 'Oisín', 'Liam', 'Declan', 'Fionn'],
    ['Murphy', 'Kelly', "O'Sullivan", 'Walsh', "O'Brien", 'Byrne', 'Ryan', "O'Connor", "O'Neill", 'Doyle', 'McCarthy',
      'Gallagher', 'Kennedy', 'Lynch', 'Quinn', 'Brennan', 'Fitzgerald', 'Daly'],
  ),
  irishGaelic: people(
    ['Aoife', 'Siobhán', 'Niamh', 'Caoimhe', 'Sinéad', 'Orlaith', 'Clíodhna', 'Saoirse', 'Gráinne', 'Róisín', 'Méabh', 'Éabha'],
    ['Seán', 'Conchúr', 'Cian', 'Dara', 'Eoin', 'Ciarán', 'Pádraig', 'Niall', 'Oisín', 'Diarmuid', 'Fionn', 'Tadhg'],
    {
      female: ['Ní Mhurchú', 'Ní Cheallaigh', 'Ní Shúilleabháin', 'Ní Bhriain', 'Ní Bhroin', 'Ní Riain', 'Ní Chonchúir',
        'Ní Néill', 'Ní Ghallchóir', 'Nic Cárthaigh'],
      male: ['Ó Murchú', 'Ó Ceallaigh', 'Ó Súilleabháin', 'Ó Briain', 'Ó Broin', 'Ó Riain', 'Ó Conchúir', 'Ó Néill',
        'Ó Gallchóir', 'Mac Cárthaigh'],
    },
  ),
  estonia: people(
    ['Mari', 'Kadri', 'Liis', 'Kertu', 'Triin', 'Piret', 'Anu', 'Helen', 'Kristiina', 'Maarja', 'Laura', 'Eliise'],
    ['Andres', 'Jaan', 'Rein', 'Toomas', 'Margus', 'Tarmo', 'Priit', 'Mart', 'Kristjan', 'Rasmus', 'Siim', 'Martin'],
    ['Tamm', 'Saar', 'Sepp', 'Mägi', 'Kask', 'Kukk', 'Rebane', 'Ilves', 'Pärn', 'Koppel', 'Lepik', 'Kuusk', 'Karu', 'Oja',
      'Kallas', 'Luik', 'Lepp', 'Raudsepp'],
  ),
  iceland: people(
    ['Guðrún', 'Anna', 'Kristín', 'Sigríður', 'Margrét', 'Helga', 'Sigrún', 'Ingibjörg', 'Jóhanna', 'Katrín', 'Eva', 'Hildur'],
    ['Jón', 'Sigurður', 'Guðmundur', 'Gunnar', 'Ólafur', 'Einar', 'Kristján', 'Magnús', 'Stefán', 'Jóhann', 'Björn', 'Arnar'],
    // Icelandic surnames are patronymics, so they follow the bearer's sex.
    {
      female: ['Jónsdóttir', 'Sigurðardóttir', 'Guðmundsdóttir', 'Gunnarsdóttir', 'Ólafsdóttir', 'Einarsdóttir',
        'Kristjánsdóttir', 'Magnúsdóttir', 'Stefánsdóttir', 'Björnsdóttir', 'Helgadóttir', 'Þórsdóttir'],
      male: ['Jónsson', 'Sigurðsson', 'Guðmundsson', 'Gunnarsson', 'Ólafsson', 'Einarsson', 'Kristjánsson', 'Magnússon',
        'Stefánsson', 'Björnsson', 'Helgason', 'Þórsson'],
    },
  ),
  lithuania: people(
    ['Ona', 'Rūta', 'Jurgita', 'Greta', 'Ieva', 'Eglė', 'Gabija', 'Austėja', 'Kristina', 'Laura', 'Aistė', 'Indrė'],
    ['Jonas', 'Antanas', 'Tomas', 'Mantas', 'Lukas', 'Darius', 'Vytautas', 'Andrius', 'Mindaugas', 'Paulius', 'Gediminas',
      'Justinas'],
    // Lithuanian surnames take a feminine form (-ienė when married, -aitė/-ytė/-ūtė when not).
    {
      female: ['Kazlauskienė', 'Jankauskaitė', 'Petrauskienė', 'Stankevičiūtė', 'Vasiliauskienė', 'Žukauskaitė', 'Butkienė',
        'Paulauskaitė', 'Urbonienė', 'Kavaliauskaitė', 'Baranauskienė', 'Navickaitė'],
      male: ['Kazlauskas', 'Jankauskas', 'Petrauskas', 'Stankevičius', 'Vasiliauskas', 'Žukauskas', 'Butkus', 'Paulauskas',
        'Urbonas', 'Kavaliauskas', 'Baranauskas', 'Navickas'],
    },
  ),
} satisfies Record<string, LocaleDefinition>;

// faker-js's fr_CA has no names of its own; given names come from fr, surnames from this list.
const QUEBEC_SURNAMES: LocaleDefinition = {
  person: {
    last_name: {
      generic: ['Tremblay', 'Gagnon', 'Roy', 'Côté', 'Bouchard', 'Gauthier', 'Morin', 'Lavoie', 'Fortin', 'Gagné',
        'Ouellet', 'Pelletier', 'Bélanger', 'Lévesque', 'Bergeron', 'Leblanc', 'Paquette', 'Girard', 'Simard', 'Boucher'],
    },
  },
};

/**
 * The faker-js locale chain each code draws names from (most specific first; `base` is appended).
 * Where faker-js has no locale, the nearest one that yields Latin-script names of that population is
 * used, or one of our own lists above.
 */
const FAKER_LOCALES: Readonly<Record<NameLocale, readonly LocaleDefinition[]>> = {
  en_KE: [OWN_NAMES.kenya],
  en_NG: [en_NG, en],
  fr_DZ: [OWN_NAMES.algeria],
  ha_NG: [OWN_NAMES.hausa],
  ig_NG: [OWN_NAMES.igbo],
  sw: [OWN_NAMES.swahili],
  tw_GH: [en_GH, en],
  yo_NG: [yo_NG, en],
  zu_ZA: [zu_ZA, en],
  en_IN: [en_IN, en],
  en_PK: [OWN_NAMES.pakistan],
  en_TH: [OWN_NAMES.thailand],
  id_ID: [id_ID],
  vi_VN: [vi],
  az_AZ: [az],
  uz_UZ: [uz_UZ_latin],
  en_US: [en_US, en],
  fr_CA: [QUEBEC_SURNAMES, fr_CA, fr],
  es_MX: [es_MX, es],
  es_AR: [es],
  es_CL: [es],
  es_CO: [es],
  pt_BR: [pt_BR],
  en_NZ: [OWN_NAMES.newZealand],
  de_AT: [de_AT, de],
  de_CH: [de_CH, de],
  de_DE: [de],
  de_LI: [de_CH, de],
  de_LU: [de],
  en_GB: [OWN_NAMES.britain],
  en_IE: [OWN_NAMES.ireland],
  es_CA: [OWN_NAMES.catalonia],
  es_ES: [es],
  fr_BE: [fr_BE, fr],
  fr_CH: [fr_CH, fr],
  fr_FR: [fr],
  ga_IE: [OWN_NAMES.irishGaelic],
  it_IT: [it],
  nl_BE: [nl_BE, nl],
  nl_NL: [nl],
  pt_PT: [pt_PT],
  da_DK: [da],
  et_EE: [OWN_NAMES.estonia],
  fi_FI: [fi],
  is_IS: [OWN_NAMES.iceland],
  lt_LT: [OWN_NAMES.lithuania],
  lv_LV: [lv],
  no_NO: [nb_NO],
  sv_SE: [sv],
  cs_CZ: [cs_CZ],
  hr_HR: [hr],
  hu_HU: [hu],
  pl_PL: [pl],
  ro_RO: [ro],
  sk_SK: [sk],
  sl_SI: [sl_SI],
  tr_TR: [tr],
};

/** A seed (same seed, same name) or a source of uniform numbers in [0, 1) such as a test's stub. */
export type NameRandom = number | (() => number);

function toRandomizer(random: NameRandom): Randomizer {
  if (typeof random === 'number') return generateMersenne53Randomizer(random);
  return { next: random, seed: () => undefined };
}

function newFaker(code: NameLocale, randomizer?: Randomizer): Faker {
  return new Faker({ locale: [...FAKER_LOCALES[code], base], randomizer });
}

const cachedFakers = new Map<NameLocale, Faker>();

function sharedFaker(code: NameLocale): Faker {
  let faker = cachedFakers.get(code);
  if (!faker) {
    faker = newFaker(code);
    cachedFakers.set(code, faker);
  }
  return faker;
}

// faker-js's Polish surnames are masculine only; the feminine form swaps the adjectival -i for -a.
const POLISH_FEMININE = /(sk|ck|dzk)i$/;

/** "Given Family" without titles or suffixes (faker's fullName adds "Dr." or "Jr." at random). */
function composeName(code: NameLocale, faker: Faker): string {
  const sex = faker.person.sexType();
  const first = faker.person.firstName(sex);
  let last = faker.person.lastName(sex);
  if (code === 'pl_PL' && sex === 'female') last = last.replace(POLISH_FEMININE, '$1a');
  return `${first} ${last}`.replace(/\s+/g, ' ').trim();
}

function requireNameLocale(code: string): NameLocale {
  if (!isNameLocale(code)) throw new Error(`unknown name locale: ${code}`);
  return code;
}

/**
 * A realistic full name for one locale. Without `random` the locale's cached Faker is used; with a seed
 * or number source a fresh Faker is built, so the shared instances are never reseeded.
 */
export function generateFullName(localeCode: string, random?: NameRandom): string {
  const code = requireNameLocale(localeCode);
  const faker = random === undefined ? sharedFaker(code) : newFaker(code, toRandomizer(random));
  return composeName(code, faker);
}

const NAME_ATTEMPTS = 10;

/**
 * A name from a random locale of `locales` (a stored selection: `["__all__"]` or empty means every
 * locale) that differs from `exclude`. After a bounded number of collisions a suffix tells them apart.
 */
export function randomFullName(locales: readonly string[], exclude?: string, random?: NameRandom): string {
  const pool = resolveNameLocales(locales);
  const randomizer = random === undefined ? undefined : toRandomizer(random);
  const next = randomizer ? () => randomizer.next() : Math.random;
  let name = '';
  for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
    const code = pool[Math.floor(next() * pool.length)] ?? ALL_NAME_LOCALES[0];
    name = composeName(code, randomizer ? newFaker(code, randomizer) : sharedFaker(code));
    if (name !== exclude) return name;
  }
  return `${name} II`;
}
