// Every entity the ORM knows; adding one here is how a table joins the schema (then `npm run db:migration:create`).
import { ApiKeySchema } from './ApiKey.ts';
import { AppSettingSchema } from './AppSetting.ts';
import { ApprovalWaitSchema } from './ApprovalWait.ts';
import { AuditEntrySchema } from './AuditEntry.ts';
import { IdempotencyKeySchema } from './IdempotencyKey.ts';
import { EventSchema, EventsPublish } from './Event.ts';
import { EventRetentionSchema } from './EventRetention.ts';
import { EventStreamSchema } from './EventStream.ts';
import { ApprovalSchema } from './Approval.ts';
import { RefreshTokenSchema } from './RefreshToken.ts';
import { SessionSchema } from './Session.ts';
import { SetupAgentSchema } from './SetupAgent.ts';
import { SetupStateSchema } from './SetupState.ts';
import { RecoveryCodeSchema } from './RecoveryCode.ts';
import { StageDecisionSchema } from './StageDecision.ts';
import { UserSchema } from './User.ts';
import { UserOrgRoleSchema } from './UserOrgRole.ts';
import { UserTotpSchema } from './UserTotp.ts';
import { WebhookSchema } from './Webhook.ts';
import { WebhookDeliverySchema } from './WebhookDelivery.ts';
import { WsTicketSchema } from './WsTicket.ts';

export const entities = [AppSettingSchema, UserSchema, UserOrgRoleSchema, SessionSchema, RefreshTokenSchema, WsTicketSchema, SetupStateSchema, SetupAgentSchema, ApprovalSchema, StageDecisionSchema, IdempotencyKeySchema, EventSchema, EventRetentionSchema, EventStreamSchema, ApiKeySchema, ApprovalWaitSchema, AuditEntrySchema, UserTotpSchema, RecoveryCodeSchema, WebhookSchema, WebhookDeliverySchema];

/** Stored functions the ORM manages (declared, migrated and called typed through `em.callRoutine`). */
export const routines = [EventsPublish];
