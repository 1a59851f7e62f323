// The service's version, read once from package.json: the probes report it and the OpenAPI document's info.version is it.
import packageJson from '../package.json' with { type: 'json' };

export const SERVICE_VERSION: string = packageJson.version;
