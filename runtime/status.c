/* rc_status texts and names, built from the one list in status.h. */
#include <remotecall/status.h>

static const char *const rc__status_text[] = {
#define RC__TEXT(name, text) text,
	RC_STATUS_LIST(RC__TEXT)
#undef RC__TEXT
};

static const char *const rc__status_names[] = {
#define RC__NAME(name, text) "RC_" #name,
	RC_STATUS_LIST(RC__NAME)
#undef RC__NAME
};

const char *rc_strerror(rc_status st)
{
	if ((unsigned)st >= (unsigned)RC__STATUS_COUNT)
		return "unknown status";
	return rc__status_text[st];
}

const char *rc_status_name(rc_status st)
{
	if ((unsigned)st >= (unsigned)RC__STATUS_COUNT)
		return "RC_?";
	return rc__status_names[st];
}
