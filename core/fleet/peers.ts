// How a member's agent finds its peers: the Secrets `edctl fleet connect` writes into the agent namespace
// (cli/fleet-connect.ts) and the folder the agent reads them from (--peer-kubeconfigs, agent/fleet-peers.ts), which
// the agent install mounts them into (constructs/agent-install.ts). One definition, so the three cannot drift.

/** Label of a peer Secret; its value is the cluster the Secret reads. */
export const PEER_LABEL = 'extendeddeployment.io/peer';
/** The key of a peer Secret that holds the kubeconfig. */
export const PEER_KUBECONFIG_KEY = 'kubeconfig';
/** The Secret, in every other member, that reads `cluster`. */
export const peerSecretName = (cluster: string): string => `extendeddeployment-peer-${cluster}`;
/** Where, in the --peer-kubeconfigs folder, the agent reads the kubeconfig of peer `cluster`. */
export const peerKubeconfigPath = (cluster: string): string => `${cluster}/kubeconfig`;
