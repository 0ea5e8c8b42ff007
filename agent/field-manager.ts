/**
 * The field manager of every write the agent makes (server-side applies, patches, status and Lease writes, Events;
 * only a Deployment's spec.paused has a manager of its own, see PAUSE_FIELD_MANAGER): managedFields then name the
 * agent as the owner of what it wrote, Git's tools never fight it over those fields, and nothing is recorded under
 * the HTTP library's user agent (`node-fetch`), which is what the API server records when a request names no manager.
 */
export const FIELD_MANAGER = 'extendeddeployment-agent';
