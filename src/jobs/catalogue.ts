// Every job type the service runs. A new one is defined beside its service (defineJob or definePeriodicJob) and listed here.
import { approvalExpiryJob } from '../services/approvals/expiry.ts';
import { housekeepingJob } from '../services/housekeeping/housekeeping.ts';
import { webhookDeliveryJob } from '../services/webhooks/delivery.ts';
import type { JobType } from './jobType.ts';

export const JOB_TYPES: readonly JobType<object>[] = [housekeepingJob, approvalExpiryJob(), webhookDeliveryJob()];
