/**
 * The package's version, as `paygate-auth --version` prints it: read from package.json when the
 * command line is built (the bundle holds the version alone, not the manifest).
 */
import { version } from '../../package.json';

/** The version of paygate-auth this command line belongs to. */
export const VERSION: string = version;
