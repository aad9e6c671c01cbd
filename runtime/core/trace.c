/* Names of the trace points (<remotecall/trace.h>). */
#include <remotecall/trace.h>

const char *rc_trace_point_name(rc_trace_point pt)
{
	static const char *const names[RC_TP_COUNT] = {
		[RC_TP_CALL_BEGIN] = "call_begin",     [RC_TP_ENCODED] = "encoded",
		[RC_TP_SENT] = "sent",                 [RC_TP_REPLY] = "reply",
		[RC_TP_DECODED] = "decoded",           [RC_TP_SRV_RECEIVED] = "srv_received",
		[RC_TP_SRV_DISPATCH] = "srv_dispatch", [RC_TP_SRV_ARGS] = "srv_args",
		[RC_TP_SRV_PROC] = "srv_proc",         [RC_TP_SRV_ENCODED] = "srv_encoded",
		[RC_TP_SRV_SENT] = "srv_sent",         [RC_TP_SRV_TOOBIG] = "srv_toobig",
	};

	return (unsigned)pt < RC_TP_COUNT ? names[pt] : "?";
}
