/*
 * rt_find.h -- the end of a value file (see rt_case.h): the number of cases and the look-up.
 */
#ifndef RT_FIND_H
#define RT_FIND_H

#define RT_NCASES (sizeof rt_cases / sizeof rt_cases[0])

/* rt_find -- the case called name, or NULL. */
static inline const rt_case *
rt_find(const char *name)
{
	for (size_t i = 0; i < RT_NCASES; i++)
		if (strcmp(rt_cases[i].name, name) == 0)
			return &rt_cases[i];
	return NULL;
}

#endif
