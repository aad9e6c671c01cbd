/* Empty stand-in for Sun's <nis_clnt.h>: see README in this folder. */
