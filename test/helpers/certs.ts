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

export interface TestChains {
  /** a leaf for localhost/127.0.0.1 valid for 90 days with an intermediate that expires in `nearExpiryDays`, both sent by the server */
  expiringIntermediateChainPath: string;
  expiringIntermediatePath: string;
  /** the same with an intermediate whose notAfter is a day in the past */
  expiredIntermediateChainPath: string;
  expiredIntermediatePath: string;
  /** a leaf and an intermediate (both valid for months) under a root of their own that expires in `nearExpiryDays` */
  shortRootChainPath: string;
  /** that root, to trust as `extraCa`; the server does not send it */
  shortRootPem: string;
  /** issued by the CA for 90 days with CN=localhost and no subjectAltName at all */
  cnOnlyCertPath: string;
  /** the intermediates' subject as a check's message names them ("O=…, CN=…") */
  subjectOf(path: string): string;
}

/** An intermediate CA certificate on the shared intermediate key, signed by `ca`/`caKey`, valid for `days` (negative: expired). */
function intermediate(dir: string, name: string, ca: string, caKey: string, days: number): string {
  writeFileSync(join(dir, "intermediate.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
  const file = `intermediate-${name}`;
  openssl(["req", "-new", "-key", "intermediate.key", "-out", `${file}.csr`, "-subj", `/O=${TEST_CA_ORGANISATION}/CN=Vigil Test Intermediate ${name}`], dir);
  openssl(["x509", "-req", "-in", `${file}.csr`, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", `${file}.pem`, "-days", String(days), "-extfile", "intermediate.ext", "-sha256"], dir);
  return join(dir, `${file}.pem`);
}

/** The leaf key's certificate for localhost signed by `ca`, followed by `chain` (the file a server presents). */
function chainFile(dir: string, name: string, ca: string, caKey: string, chain: string[]): string {
  writeFileSync(join(dir, "chain-leaf.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  openssl(["x509", "-req", "-in", "leaf.csr", "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", `chain-${name}-leaf.pem`, "-days", "90", "-extfile", "chain-leaf.ext", "-sha256"], dir);
  const out = join(dir, `chain-${name}.pem`);
  writeFileSync(out, [join(dir, `chain-${name}-leaf.pem`), ...chain].map((f) => readFileSync(f, "utf8")).join(""));
  return out;
}

/**
 * Certificate chains beside `makeCerts`' leaves, in the same directory and with the same leaf key:
 * intermediates that expire soon or have expired, a root that expires before its chain, and a leaf
 * naming its host only in the subject CN.
 *
 * @example const chains = makeChains(certs); // serve chains.expiredIntermediateChainPath with certs.keyPath
 */
export function makeChains(certs: TestCerts): TestChains {
  const dir = certs.dir;
  openssl(["genrsa", "-out", "intermediate.key", "2048"], dir);
  const expiringIntermediatePath = intermediate(dir, "expiring", "ca.pem", "ca.key", certs.nearExpiryDays);
  const expiredIntermediatePath = intermediate(dir, "expired", "ca.pem", "ca.key", -1);
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "short-root.key", "-out", "short-root.pem", "-days", String(certs.nearExpiryDays), "-subj", `/O=${TEST_CA_ORGANISATION}/CN=Vigil Test Short Root`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
  const underShortRoot = intermediate(dir, "under-short-root", "short-root.pem", "short-root.key", 200);
  writeFileSync(join(dir, "cn-only.ext"), "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  openssl(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "cn-only.pem", "-days", "90", "-extfile", "cn-only.ext", "-sha256"], dir);
  return {
    expiringIntermediatePath,
    expiringIntermediateChainPath: chainFile(dir, "expiring", expiringIntermediatePath, "intermediate.key", [expiringIntermediatePath]),
    expiredIntermediatePath,
    expiredIntermediateChainPath: chainFile(dir, "expired", expiredIntermediatePath, "intermediate.key", [expiredIntermediatePath]),
    shortRootChainPath: chainFile(dir, "short-root", underShortRoot, "intermediate.key", [underShortRoot]),
    shortRootPem: readFileSync(join(dir, "short-root.pem"), "utf8"),
    cnOnlyCertPath: join(dir, "cn-only.pem"),
    subjectOf: (path) => {
      const r = Bun.spawnSync(["openssl", "x509", "-in", path, "-noout", "-subject", "-nameopt", "sep_comma_plus_space"], { stdout: "pipe" });
      return r.stdout.toString().trim().replace(/^subject=/, "");
    },
  };
}

/** notAfter of a PEM certificate file as epoch ms, read with openssl (independent of the code under test). */
export function certNotAfterOf(path: string): number {
  const r = Bun.spawnSync(["openssl", "x509", "-in", path, "-noout", "-enddate"], { stdout: "pipe" });
  return Date.parse(r.stdout.toString().trim().replace(/^notAfter=/, ""));
}
