// zod's global settings for the browser, loaded with the schemas (api/validation.ts).
import { z } from 'zod';

// The dashboard's CSP forbids eval; without this, zod probes `new Function` and the browser reports a violation.
z.config({ jitless: true });
