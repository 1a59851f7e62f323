// Every entity the ORM knows; adding one here is how a table joins the schema (then `npm run db:migration:create`).
import { AppSettingSchema } from './AppSetting.ts';

export const entities = [AppSettingSchema];
