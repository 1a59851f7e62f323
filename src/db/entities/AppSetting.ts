// Server-wide key/value settings that must survive restarts and be shared by every instance (e.g. the generated secret).
import { defineEntity, p } from '@mikro-orm/core';

export const AppSettingSchema = defineEntity({
  name: 'AppSetting',
  tableName: 'app_setting',
  properties: {
    key: p.string().primary().length(64),
    value: p.text(),
    createdAt: p.datetime(3).onCreate(() => new Date()),
  },
});

export class AppSetting extends AppSettingSchema.class {}
AppSettingSchema.setClass(AppSetting);
