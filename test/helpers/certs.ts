/**
 * Test certificates made with the system's openssl at test time: a private CA and leaves for
 * 127.0.0.1/localhost that are valid, near expiry, expired, for the wrong host, and one self-signed.
 * Pass `caPem` as the probes' `extraCa`.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestCerts {
  dir: string;
  caPem: string;
  caPath: string;
  /** one key shared by every leaf */
  keyPath: string;
  /** valid for 90 days, SAN localhost + 127.0.0.1 */
  certPath: string;
  /** valid for 5 more days: inside the default 14-day warning window */
  nearExpiryCertPath: string;
  nearExpiryDays: number;
  /** notAfter one day in the past */
  expiredCertPath: string;
  /** valid, but only for wrong.example */
  wrongHostCertPath: string;
  /** issued by the CA, valid only from 2099 */
  notYetValidCertPath: string;
  /** self-signed, not issued by the CA */
  selfSignedCertPath: string;
  selfSignedKeyPath: string;
}

/** the CA's organisation: the issuer a probe reports for every leaf it signed */
export const TEST_CA_ORGANISATION = "Vigil Test Authority";

function openssl(args: string[], cwd: string): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

function leaf(dir: string, name: string, days: number, san: string): string {
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
  const out = join(dir, `${name}.pem`);
  // a negative -days puts notAfter in the past, which is how we get an expired certificate
  openssl(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", out, "-days", String(days), "-extfile", ext, "-sha256"], dir);
  return out;
}

/** A leaf whose validity starts in 2099: `openssl ca` is the one command of OpenSSL 3.0 that sets notBefore. */
function futureLeaf(dir: string, san: string): string {
  writeFileSync(join(dir, "ca.cnf"), "[ ca ]\ndefault_ca = test\n[ test ]\ndatabase = index.txt\nnew_certs_dir = .\nserial = ca.serial\ndefault_md = sha256\npolicy = any\n[ any ]\ncommonName = supplied\n");
  writeFileSync(join(dir, "index.txt"), "");
  writeFileSync(join(dir, "ca.serial"), "1000\n");
  writeFileSync(join(dir, "future.ext"), `subjectAltName=${san}\n`);
  openssl(["ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "leaf.csr", "-out", "not-yet-valid.pem", "-startdate", "20990101000000Z", "-enddate", "20991231000000Z", "-extfile", "future.ext", "-notext"], dir);
  return join(dir, "not-yet-valid.pem");
}

/**
 * Creates the CA and all leaves in `dir` (created if needed).
 *
 * @example const certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
 */
export function makeCerts(dir: string): TestCerts {
  mkdirSync(dir, { recursive: true });
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "365", "-subj", `/O=${TEST_CA_ORGANISATION}/CN=Vigil Test CA`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"], dir);
  const san = "DNS:localhost,IP:127.0.0.1";
  const nearExpiryDays = 5;
  const certs: TestCerts = {
    dir,
    caPath: join(dir, "ca.pem"),
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    keyPath: join(dir, "leaf.key"),
    certPath: leaf(dir, "valid", 90, san),
    nearExpiryCertPath: leaf(dir, "near-expiry", nearExpiryDays, san),
    nearExpiryDays,
    expiredCertPath: leaf(dir, "expired", -1, san),
    wrongHostCertPath: leaf(dir, "wrong-host", 90, "DNS:wrong.example"),
    notYetValidCertPath: futureLeaf(dir, san),
    selfSignedCertPath: join(dir, "self-signed.pem"),
    selfSignedKeyPath: join(dir, "self-signed.key"),
  };
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self-signed.key", "-out", "self-signed.pem", "-days", "90", "-subj", "/CN=localhost",
    "-addext", `subjectAltName=${san}`], dir);
  return certs;
}

/**
 * Another leaf for 127.0.0.1/localhost signed by the CA, valid for `days` from now (its notAfter is
 * later than that of every leaf issued before it for fewer or as many days).
 *
 * @example const tenDays = issueLeaf(certs, "ten-days", 10);
 */
export function issueLeaf(certs: TestCerts, name: string, days: number): string {
  return leaf(certs.dir, name, days, "DNS:localhost,IP:127.0.0.1");
}

/** notAfter of a PEM certificate file as epoch ms, read with openssl (independent of the code under test). */
export function certNotAfterOf(path: string): number {
  const r = Bun.spawnSync(["openssl", "x509", "-in", path, "-noout", "-enddate"], { stdout: "pipe" });
  return Date.parse(r.stdout.toString().trim().replace(/^notAfter=/, ""));
}
