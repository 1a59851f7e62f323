// The setup wizard's single state row: company, chosen name locales and completion; every wizard mutation locks it.
import { defineEntity, p } from '@mikro-orm/core';

export const SetupStateSchema = defineEntity({
  name: 'SetupState',
  tableName: 'setup_state',
  properties: {
    /** Always 1: one wizard per deployment, and its row is the lock that serialises every wizard mutation. */
    id: p.smallint().primary().autoincrement(false),
    companyName: p.string().length(200).nullable(),
    companyDescription: p.string().length(1000).nullable(),
    /** Name of the template the company was last created from; null when created without one. */
    templateName: p.string().length(64).nullable(),
    /** Null until the CEO explicitly chooses locales (`has_name_locales`); `{__all__}` means every locale. */
    nameLocales: p.array().columnType('text[]').nullable(),
    completedAt: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).nullable(),
  },
  checks: [{ name: 'setup_state_singleton', expression: 'id = 1' }],
});
export class SetupState extends SetupStateSchema.class {}
SetupStateSchema.setClass(SetupState);
