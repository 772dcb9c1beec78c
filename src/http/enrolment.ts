import type { onRequestAsyncHookHandler } from 'fastify';
import { Errors } from '../errors.js';
import { isUuid } from '../shared/ids.js';
import type { PolicyLayer } from './route-policy.js';

/** Whether REQUIRE_SECOND_FACTOR still sends this account to enrolment (mfa/mfa.service.ts, given by app.ts). */
export type EnrolmentCheck = (userId: string) => Promise<boolean>;

/**
 * The `enrolment` layer (route-policy.ts), built only when REQUIRE_SECOND_FACTOR is admins or all:
 * on every route that takes credentials (access, admin, dav) and does not declare
 * `enrolment: 'allowed'`, a caller whose account must first set up a second factor gets 403
 * mfa_enrolment_required. It runs after the access layer, so the caller is known; a request that
 * came without credentials (WebDAV's OPTIONS) has none to check.
 */
export function enrolmentRequirement(enrolmentRequired: EnrolmentCheck): PolicyLayer {
  const hook: onRequestAsyncHookHandler = async (request) => {
    const sub = request.claims?.sub;
    if (sub === undefined || !isUuid(sub)) return;
    if (await enrolmentRequired(sub.toLowerCase())) throw Errors.mfaEnrolmentRequired();
  };
  return ({ auth, enrolment }) => {
    if (enrolment === 'allowed') return undefined;
    if (auth !== 'access' && auth !== 'admin' && auth !== 'dav') return undefined;
    return { onRequest: [hook] };
  };
}
