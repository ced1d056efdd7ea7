/** The pieces every route declaration repeats: JSON bodies and the error answers it may give. */
import { z } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

export const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

export const errors = {
  400: json(S.ErrorBody, "Invalid input; `details` lists `{path, message}`"),
  401: json(S.ErrorBody, "Missing or wrong bearer token"),
  403: json(S.ErrorBody, "A cross-origin `Origin` header"),
  404: json(S.ErrorBody, "Unknown session or request"),
  409: json(S.ErrorBody, "Wrong state"),
  421: json(S.ErrorBody, "A `Host` that is not the listening address or a loopback name"),
  503: json(S.ErrorBody, "codex is down or the daemon is stopping"),
};

export const limited = {
  429: json(S.ErrorBody, "Over limits.maxLiveSessions or limits.maxEventStreams; see Retry-After"),
};

/** What starts a turn: refused while a token budget is spent (and over the session limit). */
export const budgeted = {
  429: json(
    z.union([S.BudgetErrorBody, S.ErrorBody]),
    "A token budget of the fleet or the session is spent (`budget_exceeded`: `details` gives " +
      "the budget, the spend and when the window reopens, also as Retry-After), or over " +
      "limits.maxLiveSessions",
  ),
};

export const bodyErrors = {
  ...errors,
  413: json(S.ErrorBody, "Body over 1 MiB"),
  415: json(S.ErrorBody, "Not application/json"),
};
