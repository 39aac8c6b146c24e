/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_CREDS_H
#define SOAK_OBJ_CREDS_H

#include <stddef.h>

/*
 * S3 credentials in the AWS shared-credentials format, as the AWS CLI and
 * s3cmd users already keep them:
 *
 *     [default]
 *     aws_access_key_id = AKIA...
 *     aws_secret_access_key = ...
 *     aws_session_token = ...        (optional)
 *
 * read from a file named in the config or from a systemd credential
 * ($CREDENTIALS_DIRECTORY/NAME, LoadCredential=).  Secrets live only in
 * struct obj_creds, are wiped when it is freed, and are never printed:
 * error messages name the file, the profile and the line, never a value.
 */

#define OBJ_CREDS_MAX_FILE 65536
#define OBJ_CREDS_MAX_VALUE 2048

struct obj_creds {
	char *access_key;
	char *secret_key;
	char *session_token; /* NULL if none */
};

/* Parses text (len bytes); on failure returns -EINVAL (or -ENOMEM) and
 * writes why to err.  `what` names the source in messages. */
int obj_creds_parse(const char *text, size_t len, const char *profile, const char *what,
		    struct obj_creds *ret, char *err, size_t errlen);
/* Reads and parses a file: regular, at most OBJ_CREDS_MAX_FILE bytes. */
int obj_creds_load(const char *path, const char *profile, struct obj_creds *ret, char *err,
		   size_t errlen);
/* Where a systemd credential lives: $CREDENTIALS_DIRECTORY/NAME.  Returns
 * -ENOENT with a message when the variable is not set. */
int obj_creds_systemd_path(const char *name, char *buf, size_t len, char *err, size_t errlen);
/* Wipes and frees the strings; the struct may then be reused. */
void obj_creds_clear(struct obj_creds *c);

#endif
