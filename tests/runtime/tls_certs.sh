#!/usr/bin/env bash
# tls_certs.sh DIR -- make the certificates the TLS tests use, with the openssl command, in DIR:
#   ca.pem                 the test CA (ca.key)
#   server.pem/.key        signed by it, subjectAltName DNS:localhost, IP:127.0.0.1, IP:::1
#   client.pem/.key        signed by it, CN=alice, subjectAltName DNS:alice.example,
#                          email:alice@example.org
#   expired.pem/.key       a server certificate (same names) that expired in 2020
#   other-ca.pem           another CA (other-ca.key), that signed nothing here
#   other-client.pem/.key  a client certificate signed by other-ca
#   other-server.pem/.key  a server certificate (server.pem's names) signed by other-ca
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
q() { "$@" >/dev/null 2>&1 || { echo "tls_certs: failed: $*" >&2; "$@"; exit 1; }; }
ec() { q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

mkca() { # name CN
	ec "$1.key"
	q openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 3650 -out "$1.pem" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
mkca ca "remotecall test CA"
mkca other-ca "some other CA"

# leaf NAME CA SUBJ SAN [EKU]
leaf() {
	ec "$1.key"
	q openssl req -new -key "$1.key" -subj "$3" -out "$1.csr"
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=%s\n' "$4" "$5" > "$1.ext"
	q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 30 \
		-extfile "$1.ext" -out "$1.pem"
}
leaf server ca "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" serverAuth
leaf client ca "/O=remotecall tests/CN=alice" "DNS:alice.example,email:alice@example.org" clientAuth
leaf other-client other-ca "/CN=mallory" "DNS:mallory.example" clientAuth
leaf other-server other-ca "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" serverAuth

# expired: openssl ca can set dates in the past
ec expired.key
q openssl req -new -key expired.key -subj "/CN=localhost" -out expired.csr
mkdir -p cadb
: > cadb/index.txt
echo 01 > cadb/serial
cat > cadb/ca.cnf <<CNF
[ca]
default_ca = d
[d]
database = cadb/index.txt
serial = cadb/serial
new_certs_dir = cadb
default_md = sha256
policy = p
copy_extensions = none
x509_extensions = x
[p]
commonName = supplied
[x]
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
extendedKeyUsage = serverAuth
CNF
q openssl ca -batch -config cadb/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
	-startdate 20200101000000Z -enddate 20200102000000Z -out expired.pem
rm -f ./*.csr ./*.ext ./*.srl
