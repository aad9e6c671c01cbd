/*
 * RPCSEC_GSS, the acceptor's credential (gss_int.h): the krb5 keys a server accepts contexts
 * with, from a keytab. gss_svc.c's table takes one when it is made and another each time the
 * keytab is reloaded (rc_server_set_gss again: docs/runtime.md, "Changes while serving").
 */
#include <string.h>

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include "runtime/auth/gss_int.h"

/* gss_int.h */
int rc__gss_cred_acquire(const char *principal, const char *keytab, gss_cred_id_t *cred,
			 rc__gss_err *err)
{
	gss_OID_set_desc krb5_set = { 1, (gss_OID)gss_mech_krb5 };
	gss_key_value_element_desc kv = { "keytab", keytab };
	gss_key_value_set_desc store = { 1, &kv };
	gss_name_t name = GSS_C_NO_NAME;
	OM_uint32 maj, min;

	*cred = GSS_C_NO_CREDENTIAL;
	if (principal) {
		gss_buffer_desc nb = { strlen(principal), (void *)principal };
		gss_OID type = strchr(principal, '/') ? (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME :
							GSS_C_NT_HOSTBASED_SERVICE;
		maj = gss_import_name(&min, &nb, type, &name);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_import_name (acceptor)", maj, min);
			return -1;
		}
	}
	maj = gss_acquire_cred_from(&min, name, GSS_C_INDEFINITE, &krb5_set, GSS_C_ACCEPT,
				    keytab ? &store : GSS_C_NO_CRED_STORE, cred, NULL, NULL);
	if (name != GSS_C_NO_NAME) {
		OM_uint32 m2;
		gss_release_name(&m2, &name);
	}
	if (GSS_ERROR(maj)) {
		rc__gss_err_status(err, "gss_acquire_cred (acceptor)", maj, min);
		*cred = GSS_C_NO_CREDENTIAL;
		return -1;
	}
	return 0;
}
