import { describe, expect, it } from 'vitest';
import { trafficService } from '../api/traffic.js';
import { NAME_LABEL, REVISION_LABEL } from '../labels.js';
import { MAX_SERVICE_NAME, replicasService, revisionService, revisionServiceName, serviceNameProblem, servicePort } from './services.js';

const OWNER = { name: 'web', namespace: 'shop', uid: 'u-1' };
const settings = (input: Parameters<typeof trafficService.parse>[0] = undefined) => trafficService.parse(input);

describe('revisionServiceName', () => {
  it.each([
    ['web', '3f9a1c0d2e', 'web-3f9a1c0d2e'],
    // 63 - 11 = 52 characters of the name are kept.
    ['a'.repeat(63), '3f9a1c0d2e', `${'a'.repeat(52)}-3f9a1c0d2e`],
    // A cut that ends in "-" loses it: no "--" and no label ending before the revision with a dash pair.
    [`${'a'.repeat(51)}-bcd`, '3f9a1c0d2e', `${'a'.repeat(51)}-3f9a1c0d2e`],
    [`${'a'.repeat(52)}`, '3f9a1c0d2e', `${'a'.repeat(52)}-3f9a1c0d2e`],
  ])('%s at %s is %s', (ed, revision, expected) => {
    expect(revisionServiceName(ed, revision)).toBe(expected);
    expect(revisionServiceName(ed, revision).length).toBeLessThanOrEqual(MAX_SERVICE_NAME);
  });

  it('is the same name at every call (no random suffix), so the same revision finds its Service again', () => {
    const ed = `shop-frontend-${'x'.repeat(60)}`.slice(0, 63);
    expect(revisionServiceName(ed, '0123456789')).toBe(revisionServiceName(ed, '0123456789'));
    expect(revisionServiceName(ed, '0123456789')).not.toBe(revisionServiceName(ed, '9876543210'));
  });
});

describe('servicePort', () => {
  it.each([
    ['every default', undefined, { name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }],
    [
      'a port and no target: the target is the port, as Kubernetes defaults it',
      { port: 8080 },
      { name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' },
    ],
    ['a named target port', { targetPort: 'web' }, { name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }],
    [
      'appProtocol',
      { name: 'grpc', port: 9000, appProtocol: 'kubernetes.io/h2c' },
      { name: 'grpc', port: 9000, targetPort: 9000, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' },
    ],
  ] as const)('%s', (_, input, expected) => {
    expect(servicePort(settings(input))).toEqual(expected);
  });
});

describe('revisionService', () => {
  it('selects the revision by the renderer-owned labels and is controlled by the ExtendedDeployment', () => {
    expect(revisionService(OWNER, '3f9a1c0d2e', settings())).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web-3f9a1c0d2e',
        namespace: 'shop',
        labels: { [NAME_LABEL]: 'web', [REVISION_LABEL]: '3f9a1c0d2e', 'app.kubernetes.io/managed-by': 'extendeddeployment-agent' },
        ownerReferences: [
          { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: {
        type: 'ClusterIP',
        selector: { [NAME_LABEL]: 'web', [REVISION_LABEL]: '3f9a1c0d2e' },
        ports: [{ name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }],
      },
    });
  });

  it('carries no Argo CD tracking annotation (no GitOps engine prunes or diffs it)', () => {
    const service = revisionService(OWNER, '3f9a1c0d2e', settings());
    expect(JSON.stringify(service)).not.toContain('argocd.argoproj.io');
  });
});

describe('replicasService', () => {
  it('selects every pod of the ExtendedDeployment, whatever its revision, and has no owner (Git renders it)', () => {
    const service = replicasService({ name: 'web', namespace: 'shop' }, settings({ port: 8080, targetPort: 'http' }));
    expect(service.metadata).toEqual({ name: 'web', namespace: 'shop', labels: { [NAME_LABEL]: 'web' } });
    expect(service.spec.selector).toEqual({ [NAME_LABEL]: 'web' });
    expect(service.spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
  });
});

describe('serviceNameProblem', () => {
  it.each([
    ['web', false],
    ['w1', false],
    ['1web', true],
    ['9', true],
  ])('%s: problem %s', (name, problem) => {
    const found = serviceNameProblem({ name, namespace: 'shop' });
    expect(found !== undefined).toBe(problem);
    if (found) expect(found).toMatchObject({ object: { kind: 'ExtendedDeployment', name, namespace: 'shop' }, path: ['metadata', 'name'] });
  });
});
