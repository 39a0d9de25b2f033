import * as z from 'zod';

/** The five statuses of 2025-11-25 and of the 2026 extension (spec §1.5, §3.3); SEP-1686 adds two of its own. */
export const WIRE_TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

export const WireTaskStatusSchema = z.enum(WIRE_TASK_STATUSES);
export type WireTaskStatus = z.infer<typeof WireTaskStatusSchema>;

/** A JSON-RPC error object as it travels (a stored outcome, an inlined `error`). */
export const RpcErrorSchema = z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() });
