/*
 * RFC 4121 MIC and Wrap tokens from a lucid krb5 context (see gss_krb5.h).
 *
 * Keys (RFC 3961 section 5.1, RFC 3962, RFC 8009): from the base key -- the acceptor subkey
 * when the context has one, else the context key -- Kc = DK(base, usage | 0x99) for MICs,
 * Ke = DK(base, usage | 0xAA) and Ki = DK(base, usage | 0x55) for wrap tokens, with the key
 * usages of RFC 4121 section 2: we send with SIGN/SEAL of our side and check the peer's with
 * its side's. Derived once; the HMAC states keep their key schedule, so a message costs an
 * HMAC (and AES-CBC-CTS for a wrap) and no key setup.
 */
/* The HMACs run on OpenSSL's low-level SHA functions with the key's inner and outer pads
 * hashed once: a message then costs a struct copy and the compressions. OpenSSL 3.0's EVP_MAC
 * (and EVP_MD_CTX_copy_ex) duplicate the provider's context per message -- an allocation and
 * about 0.6 us more per MIC, measured. The low-level calls are deprecated in 3.0, still there. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gssapi/gssapi_krb5.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "runtime/auth/gss_krb5.h"

enum {
	USAGE_ACCEPTOR_SEAL = 22,
	USAGE_ACCEPTOR_SIGN = 23,
	USAGE_INITIATOR_SEAL = 24,
	USAGE_INITIATOR_SIGN = 25,
	FLAG_SENT_BY_ACCEPTOR = 0x01,
	FLAG_SEALED = 0x02,
	FLAG_ACCEPTOR_SUBKEY = 0x04,
};

/* HMAC with a fixed key: SHA's state after the key's inner pad, and after its outer pad. */
typedef union sha_state {
	SHA_CTX s1;
	SHA256_CTX s256;
	SHA512_CTX s512;
} sha_state;

typedef struct hmac {
	int md;                 /* 1, 256 or 384 */
	sha_state in, out;
} hmac;

/* One direction's keys. */
typedef struct dir_keys {
	hmac kc, ki;            /* HMAC with Kc, with Ki */
	EVP_CIPHER_CTX *cbc;    /* AES-CBC with Ke: encrypting (send) or decrypting (receive) */
	EVP_CIPHER_CTX *ecb;    /* receive: AES-ECB decryption with Ke (CTS's last blocks) */
	unsigned char chain[16]; /* cbc's chaining block: the last ciphertext block it saw */
} dir_keys;

struct rc__krb5_ctx {
	int enctype;
	bool initiator, subkey;
	bool etm;               /* RFC 8009: the HMAC is over IV | ciphertext */
	size_t hlen;            /* checksum bytes: 12, 16 or 24 */
	_Atomic uint64_t send_seq;
	dir_keys send, recv;
};

static atomic_bool lucid_off;

void rc__krb5_enable(bool on)
{
	atomic_store(&lucid_off, !on);
}

int rc__krb5_enctype(const rc__krb5_ctx *k)
{
	return k->enctype;
}

static void st64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* RFC 3961 section 5.1's n-fold of in[0..inlen) to out[0..outlen) (the bit rotation by 13 of
 * each repetition, added with end-around carry). */
static void nfold(const unsigned char *in, size_t inlen, unsigned char *out, size_t outlen)
{
	size_t a = outlen, b = inlen, lcm;
	unsigned carry = 0;

	while (b) {
		size_t c = b;
		b = a % b;
		a = c;
	}
	lcm = outlen * inlen / a;
	memset(out, 0, outlen);
	for (size_t j = lcm; j-- > 0;) {
		size_t msbit = (((inlen << 3) - 1) + (((inlen << 3) + 13) * (j / inlen)) +
				((inlen - (j % inlen)) << 3)) % (inlen << 3);
		carry += ((((unsigned)in[((inlen - 1) - (msbit >> 3)) % inlen] << 8) |
			   in[(inlen - (msbit >> 3)) % inlen]) >> ((msbit & 7) + 1)) & 0xff;
		carry += out[j % outlen];
		out[j % outlen] = (unsigned char)carry;
		carry >>= 8;
	}
	for (size_t j = outlen; carry && j-- > 0;) {
		carry += out[j];
		out[j] = (unsigned char)carry;
		carry >>= 8;
	}
}

static const unsigned char zero_iv[16];

static const EVP_CIPHER *aes_cipher(size_t keylen, bool cbc)
{
	if (keylen == 16)
		return cbc ? EVP_aes_128_cbc() : EVP_aes_128_ecb();
	return cbc ? EVP_aes_256_cbc() : EVP_aes_256_ecb();
}

/* RFC 3961's DK for AES (random-to-key is the identity): the blocks of
 * E(base, n-fold(usage | what)), E(base, previous), ... up to klen bytes. */
static int dk_aes(const unsigned char *base, size_t klen, uint32_t usage, unsigned char what,
		  unsigned char *out)
{
	unsigned char c[5] = { (unsigned char)(usage >> 24), (unsigned char)(usage >> 16),
			       (unsigned char)(usage >> 8), (unsigned char)usage, what };
	unsigned char blk[16];
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int ol, ok = x && EVP_EncryptInit_ex(x, aes_cipher(klen, false), NULL, base, NULL) == 1 &&
		     EVP_CIPHER_CTX_set_padding(x, 0) == 1;

	nfold(c, sizeof c, blk, sizeof blk);
	for (size_t at = 0; ok && at < klen; at += 16) {
		ok = EVP_EncryptUpdate(x, blk, &ol, blk, 16) == 1;
		memcpy(out + at, blk, 16);
	}
	OPENSSL_cleanse(blk, sizeof blk);
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -1;
}

static void sha_init(int md, sha_state *x)
{
	if (md == 1)
		SHA1_Init(&x->s1);
	else if (md == 256)
		SHA256_Init(&x->s256);
	else
		SHA384_Init(&x->s512);
}

static void sha_update(int md, sha_state *x, const void *p, size_t n)
{
	if (md == 1)
		SHA1_Update(&x->s1, p, n);
	else if (md == 256)
		SHA256_Update(&x->s256, p, n);
	else
		SHA384_Update(&x->s512, p, n);
}

/* The digest into out; its length. */
static size_t sha_final(int md, sha_state *x, unsigned char *out)
{
	if (md == 1) {
		SHA1_Final(out, &x->s1);
		return SHA_DIGEST_LENGTH;
	}
	if (md == 256) {
		SHA256_Final(out, &x->s256);
		return SHA256_DIGEST_LENGTH;
	}
	SHA384_Final(out, &x->s512);
	return SHA384_DIGEST_LENGTH;
}

/* h: HMAC with md and key[0..klen), klen at most a block (our keys are 16 to 32 bytes). */
static void hmac_init(hmac *h, int md, const unsigned char *key, size_t klen)
{
	unsigned char pad[128];
	size_t bl = md == 384 ? 128 : 64;

	h->md = md;
	for (int o = 0; o < 2; o++) {
		memset(pad, o ? 0x5c : 0x36, bl);
		for (size_t i = 0; i < klen; i++)
			pad[i] ^= key[i];
		sha_state *x = o ? &h->out : &h->in;
		sha_init(md, x);
		sha_update(md, x, pad, bl);
	}
	OPENSSL_cleanse(pad, sizeof pad);
}

/* HMAC over a | b (either may be empty) into out (the whole digest); its length. */
static size_t hmac_run(const hmac *h, const void *a, size_t al, const void *b, size_t bl,
		       unsigned char *out)
{
	sha_state x = h->in;
	size_t n;

	if (al)
		sha_update(h->md, &x, a, al);
	if (bl)
		sha_update(h->md, &x, b, bl);
	n = sha_final(h->md, &x, out);
	x = h->out;
	sha_update(h->md, &x, out, n);
	n = sha_final(h->md, &x, out);
	OPENSSL_cleanse(&x, sizeof x);
	return n;
}

/* RFC 8009's KDF-HMAC-SHA2(base, usage | what, bits): HMAC(base, 1 | label | 0 | bits). */
static void kdf_sha2(int md, const unsigned char *base, size_t blen, uint32_t usage,
		     unsigned char what, size_t bits, unsigned char *out)
{
	unsigned char in[14] = { 0, 0, 0, 1, (unsigned char)(usage >> 24),
				 (unsigned char)(usage >> 16), (unsigned char)(usage >> 8),
				 (unsigned char)usage, what, 0, 0, 0,
				 (unsigned char)(bits >> 8), (unsigned char)bits };
	unsigned char d[SHA512_DIGEST_LENGTH];
	hmac h;

	hmac_init(&h, md, base, blen);
	hmac_run(&h, in, sizeof in, NULL, 0, d);
	memcpy(out, d, bits / 8);
	OPENSSL_cleanse(d, sizeof d);
	OPENSSL_cleanse(&h, sizeof h);
}

/* Derive one direction's keys: usages sign and seal, for sending (enc) or receiving. */
static int dir_init(rc__krb5_ctx *k, dir_keys *d, const unsigned char *base, size_t blen,
		    uint32_t sign, uint32_t seal, bool enc)
{
	unsigned char kc[32], ke[32], ki[32];
	size_t kl = blen, ml; /* Ke's length, Kc's and Ki's */
	int md, bad;

	if (!k->etm) {
		md = 1;
		ml = blen;
		bad = dk_aes(base, blen, sign, 0x99, kc) || dk_aes(base, blen, seal, 0xAA, ke) ||
		      dk_aes(base, blen, seal, 0x55, ki);
	} else {
		md = k->enctype == 20 ? 384 : 256;
		ml = md == 384 ? 24 : 16;
		kdf_sha2(md, base, blen, sign, 0x99, ml * 8, kc);
		kdf_sha2(md, base, blen, seal, 0xAA, kl * 8, ke);
		kdf_sha2(md, base, blen, seal, 0x55, ml * 8, ki);
		bad = 0;
	}
	if (!bad) {
		hmac_init(&d->kc, md, kc, ml);
		hmac_init(&d->ki, md, ki, ml);
		d->cbc = EVP_CIPHER_CTX_new();
		d->ecb = enc ? NULL : EVP_CIPHER_CTX_new();
		bad = !d->cbc || (!enc && !d->ecb) ||
		      EVP_CipherInit_ex(d->cbc, aes_cipher(kl, true), NULL, ke, zero_iv, enc) != 1 ||
		      EVP_CIPHER_CTX_set_padding(d->cbc, 0) != 1 ||
		      (!enc && (EVP_CipherInit_ex(d->ecb, aes_cipher(kl, false), NULL, ke, NULL, 0) != 1 ||
				EVP_CIPHER_CTX_set_padding(d->ecb, 0) != 1));
	}
	OPENSSL_cleanse(kc, sizeof kc);
	OPENSSL_cleanse(ke, sizeof ke);
	OPENSSL_cleanse(ki, sizeof ki);
	return bad ? -1 : 0;
}

static void dir_fini(dir_keys *d)
{
	/* OpenSSL cleanses the AES key schedules when it frees them; the HMAC states go with
	 * the context's OPENSSL_cleanse */
	EVP_CIPHER_CTX_free(d->cbc);
	EVP_CIPHER_CTX_free(d->ecb);
}

void rc__krb5_free(rc__krb5_ctx *k)
{
	if (!k)
		return;
	dir_fini(&k->send);
	dir_fini(&k->recv);
	OPENSSL_cleanse(k, sizeof *k);
	free(k);
}

static rc__krb5_ctx *from_lucid(const gss_krb5_lucid_context_v1_t *l)
{
	if (l->version != 1 || l->protocol != 1)
		return NULL;
	const gss_krb5_lucid_key_t *key = l->cfx_kd.have_acceptor_subkey ?
					  &l->cfx_kd.acceptor_subkey : &l->cfx_kd.ctx_key;
	size_t want;
	switch (key->type) {
	case 17: case 19: want = 16; break;
	case 18: case 20: want = 32; break;
	default: return NULL;
	}
	if (key->length != want || !key->data)
		return NULL;
	rc__krb5_ctx *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->enctype = (int)key->type;
	k->initiator = l->initiate != 0;
	k->subkey = l->cfx_kd.have_acceptor_subkey != 0;
	k->etm = key->type >= 19;
	k->hlen = key->type <= 18 ? 12 : key->type == 19 ? 16 : 24;
	atomic_init(&k->send_seq, l->send_seq);
	uint32_t my_sign = k->initiator ? USAGE_INITIATOR_SIGN : USAGE_ACCEPTOR_SIGN;
	uint32_t my_seal = k->initiator ? USAGE_INITIATOR_SEAL : USAGE_ACCEPTOR_SEAL;
	uint32_t peer_sign = k->initiator ? USAGE_ACCEPTOR_SIGN : USAGE_INITIATOR_SIGN;
	uint32_t peer_seal = k->initiator ? USAGE_ACCEPTOR_SEAL : USAGE_INITIATOR_SEAL;
	if (dir_init(k, &k->send, key->data, want, my_sign, my_seal, true) ||
	    dir_init(k, &k->recv, key->data, want, peer_sign, peer_seal, false)) {
		rc__krb5_free(k);
		return NULL;
	}
	return k;
}

rc__krb5_ctx *rc__krb5_from_gss(gss_ctx_id_t *ctx)
{
	OM_uint32 maj, min;
	gss_buffer_desc tok = GSS_C_EMPTY_BUFFER;
	gss_ctx_id_t lucid_copy = GSS_C_NO_CONTEXT, kept = GSS_C_NO_CONTEXT;
	void *lucid = NULL;
	rc__krb5_ctx *k = NULL;
	const char *env = getenv("RC_GSS_NO_LUCID");

	if ((env && *env && strcmp(env, "0") != 0) || atomic_load(&lucid_off) || *ctx == GSS_C_NO_CONTEXT)
		return NULL;
	/* The lucid export deletes the context it is given, and export deletes its context too:
	 * export once, import twice -- one copy to make the lucid one of, one to keep. */
	maj = gss_export_sec_context(&min, ctx, &tok);
	if (GSS_ERROR(maj))
		return NULL; /* *ctx is left as it was */
	maj = gss_import_sec_context(&min, &tok, &kept);
	if (!GSS_ERROR(maj))
		maj = gss_import_sec_context(&min, &tok, &lucid_copy);
	OPENSSL_cleanse(tok.value, tok.length); /* it holds the keys */
	gss_release_buffer(&min, &tok);
	if (GSS_ERROR(maj)) {
		*ctx = kept; /* NO_CONTEXT if even the first import failed */
		return NULL;
	}
	*ctx = kept;
	maj = gss_krb5_export_lucid_sec_context(&min, &lucid_copy, 1, &lucid);
	if (lucid_copy != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &lucid_copy, GSS_C_NO_BUFFER);
	if (GSS_ERROR(maj) || !lucid)
		return NULL;
	k = from_lucid(lucid);
	gss_krb5_free_lucid_sec_context(&min, lucid);
	return k;
}

/* HMAC with h over a | b, truncated to k->hlen, into out. */
static int mac2(const rc__krb5_ctx *k, const hmac *h, const void *a, size_t al, const void *b,
		size_t bl, unsigned char *out)
{
	unsigned char d[SHA512_DIGEST_LENGTH];

	hmac_run(h, a, al, b, bl, d);
	memcpy(out, d, k->hlen);
	return 0;
}

/* The token header's first 16 bytes. */
static void header(rc__krb5_ctx *k, unsigned char *h, bool wrap)
{
	h[0] = wrap ? 0x05 : 0x04;
	h[1] = 0x04;
	h[2] = (unsigned char)((k->initiator ? 0 : FLAG_SENT_BY_ACCEPTOR) |
			       (wrap ? FLAG_SEALED : 0) | (k->subkey ? FLAG_ACCEPTOR_SUBKEY : 0));
	memset(h + 3, 0xff, wrap ? 1 : 5);
	if (wrap)
		memset(h + 4, 0, 4); /* EC 0 (CTS needs no padding), RRC 0 */
	st64(h + 8, atomic_fetch_add(&k->send_seq, 1));
}

/* The peer's header: the token id, the direction and subkey flags, the filler. */
static bool peer_header_ok(const rc__krb5_ctx *k, const unsigned char *h, bool wrap)
{
	static const unsigned char ff[5] = { 0xff, 0xff, 0xff, 0xff, 0xff };
	unsigned want = (k->initiator ? FLAG_SENT_BY_ACCEPTOR : 0) |
			(k->subkey ? FLAG_ACCEPTOR_SUBKEY : 0);

	if (h[0] != (wrap ? 0x05 : 0x04) || h[1] != 0x04 ||
	    (h[2] & (FLAG_SENT_BY_ACCEPTOR | FLAG_ACCEPTOR_SUBKEY)) != want)
		return false;
	if (wrap)
		return h[3] == 0xff && (h[2] & FLAG_SEALED);
	return memcmp(h + 3, ff, 5) == 0;
}

size_t rc__krb5_get_mic(rc__krb5_ctx *k, const void *msg, size_t n, unsigned char *tok)
{
	header(k, tok, false);
	/* the checksum is over the message, then the header */
	if (mac2(k, &k->send.kc, msg, n, tok, 16, tok + 16))
		return 0;
	return 16 + k->hlen;
}

int rc__krb5_verify_mic(rc__krb5_ctx *k, const void *msg, size_t n, const void *tok, size_t len)
{
	const unsigned char *t = tok;
	unsigned char sum[SHA512_DIGEST_LENGTH];

	if (len != 16 + k->hlen || !peer_header_ok(k, t, false) ||
	    mac2(k, &k->recv.kc, msg, n, t, 16, sum))
		return -1;
	return CRYPTO_memcmp(sum, t + 16, k->hlen) == 0 ? 0 : -1;
}

size_t rc__krb5_wrap_len(const rc__krb5_ctx *k, size_t n)
{
	return RC__KRB5_WRAP_PRE + n + 16 + k->hlen;
}

/* EVP's int lengths: the bulk in pieces. */
static int cipher_update(EVP_CIPHER_CTX *c, unsigned char *out, const unsigned char *in,
			 size_t n)
{
	int ol;

	while (n) {
		size_t piece = n > (1u << 30) ? (1u << 30) : n;
		if (EVP_CipherUpdate(c, out, &ol, in, (int)piece) != 1)
			return -1;
		out += piece;
		in += piece;
		n -= piece;
	}
	return 0;
}

static void xor16(unsigned char *p, const unsigned char *q)
{
	for (int i = 0; i < 16; i++)
		p[i] ^= q[i];
}

/* AES-CBC-CTS (RFC 3962: CBC with the last two blocks swapped and the last one cut to what
 * the plaintext has) of p[0..n), n >= 16, in place, with a zero IV. The CBC state is never
 * reset (OpenSSL 3.0's EVP_CipherInit_ex costs more than a small message's AES): the IV it
 * chains with, d->chain, is XORed into the first block instead, which comes to the same. */
static int cts_encrypt(dir_keys *d, unsigned char *p, size_t n)
{
	xor16(p, d->chain);
	if (n == 16) {
		if (cipher_update(d->cbc, p, p, 16))
			return -1;
		memcpy(d->chain, p, 16);
		return 0;
	}
	size_t head = (n - 1) / 16 * 16, r = n - head; /* r: 1..16 bytes in the last block */
	unsigned char last[16] = { 0 }, cm[16], prev[16];
	memcpy(last, p + head, r);
	if (cipher_update(d->cbc, p, p, head) || cipher_update(d->cbc, cm, last, 16))
		return -1;
	memcpy(d->chain, cm, 16);
	memcpy(prev, p + head - 16, 16);
	memcpy(p + head - 16, cm, 16);
	memcpy(p + head, prev, r);
	return 0;
}

static int cts_decrypt(dir_keys *d, unsigned char *p, size_t n)
{
	unsigned char iv[16];

	memcpy(iv, d->chain, 16);
	if (n == 16) {
		memcpy(d->chain, p, 16);
		if (cipher_update(d->cbc, p, p, 16))
			return -1;
		xor16(p, iv);
		return 0;
	}
	size_t head = (n - 1) / 16 * 16, r = n - head;
	unsigned char dn[16], full[16];
	/* p[head-16..head) is the last block's ciphertext; decrypted alone it is the
	 * second-to-last block's ciphertext XOR the (zero-padded) last plaintext */
	if (cipher_update(d->ecb, dn, p + head - 16, 16))
		return -1;
	memcpy(full, p + head, r);
	memcpy(full + r, dn + r, 16 - r);
	if (cipher_update(d->cbc, p, p, head - 16) || cipher_update(d->cbc, p + head - 16, full, 16))
		return -1;
	memcpy(d->chain, full, 16);
	xor16(p, iv); /* the first block's plaintext: as if the IV were zero */
	for (size_t i = 0; i < r; i++)
		p[head + i] = dn[i] ^ full[i];
	return 0;
}

int rc__krb5_wrap(rc__krb5_ctx *k, unsigned char *tok, size_t n)
{
	unsigned char *e = tok + 16;           /* confounder | plaintext | header */
	size_t el = 16 + n + 16;

	header(k, tok, true);
	if (RAND_bytes(e, 16) != 1)
		return -1;
	memcpy(e + 16 + n, tok, 16);           /* the encrypted copy: RRC 0 as sent */
	if (k->etm) { /* RFC 8009: encrypt, then HMAC(Ki, IV | ciphertext) */
		return cts_encrypt(&k->send, e, el) ||
		       mac2(k, &k->send.ki, zero_iv, 16, e, el, e + el) ? -1 : 0;
	}
	/* RFC 3962: HMAC(Ki, plaintext), then encrypt */
	return mac2(k, &k->send.ki, e, el, NULL, 0, e + el) || cts_encrypt(&k->send, e, el) ? -1 : 0;
}

static void reverse(unsigned char *p, size_t n)
{
	for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
		unsigned char t = p[i];
		p[i] = p[j - 1];
		p[j - 1] = t;
	}
}

int rc__krb5_unwrap(rc__krb5_ctx *k, unsigned char *tok, size_t len, size_t *off, size_t *n)
{
	unsigned char sum[SHA512_DIGEST_LENGTH];

	if (len < 16 || !peer_header_ok(k, tok, true))
		return -1;
	size_t ec = (size_t)tok[4] << 8 | tok[5], rrc = (size_t)tok[6] << 8 | tok[7];
	unsigned char *e = tok + 16;
	size_t dl = len - 16;
	if (dl < 16 + 16 + k->hlen + ec)
		return -1;
	if (rrc % dl) { /* the sender rotated right by RRC: rotate left, in place */
		size_t r = rrc % dl;
		reverse(e, r);
		reverse(e + r, dl - r);
		reverse(e, dl);
	}
	size_t el = dl - k->hlen;
	if (k->etm) {
		if (mac2(k, &k->recv.ki, zero_iv, 16, e, el, sum) ||
		    CRYPTO_memcmp(sum, e + el, k->hlen) != 0 || cts_decrypt(&k->recv, e, el))
			return -1;
	} else if (cts_decrypt(&k->recv, e, el) || mac2(k, &k->recv.ki, e, el, NULL, 0, sum) ||
		   CRYPTO_memcmp(sum, e + el, k->hlen) != 0) {
		return -1;
	}
	/* the encrypted header copy (RFC 4121 section 4.2.4): all as in the clear header but
	 * the RRC, which is 0 inside -- EC too, or a changed EC would cut the plaintext */
	const unsigned char *h = e + el - 16;
	if (memcmp(h, tok, 6) != 0 || memcmp(h + 8, tok + 8, 8) != 0)
		return -1;
	*off = RC__KRB5_WRAP_PRE;
	*n = el - 32 - ec;
	return 0;
}
