/*-------------------------------------------------------------------------
 *
 * cli.c
 *	  bloomfilter-cli: the client library (bloomfilter.h) for shell scripts:
 *	  the options, the file commands (info, contains, add, build, union,
 *	  convert) and what they share with `sync` (cli.h), which lives in
 *	  clisync.c with the CLI's only libpq code.  See usage() for the
 *	  commands; docs/client.md has examples.
 *
 * Files hold a filter in any of its forms: binary (bloom::bytea), text
 * ("bloom:..." as bloom_out writes it and psql -At prints it) or hex ("\x..."
 * as psql prints f::bytea); each is recognised by its start.  Keys come
 * from the arguments or, if there are none, one per line from stdin; a key
 * is the whole line without its newline, blanks included.
 *
 * Exit status: 0 done; 1 invalid data (a filter, a key, filters that cannot
 * be combined; for sync, an error of the server's that retrying would not
 * mend); 2 usage; 3 a file could not be read or written.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomfilter.h"
#include "cli.h"

const char *progname = "bloomfilter-cli";

static void
usage(FILE *out)
{
	fprintf(out,
			"Usage: %s COMMAND [OPTION]... [ARGUMENT]...\n"
			"Bloom filters of the bloomfilter PostgreSQL extension, outside the server.\n"
			"\n"
			"Commands:\n"
			"  info FILE                 bloom_info's fields, one \"name<TAB>value\" per line\n"
			"  contains FILE [KEY]...    one \"KEY<TAB>t\" (maybe present) or \"KEY<TAB>f\"\n"
			"                            (absent) per key\n"
			"  add FILE [KEY]...         FILE with the keys added, on stdout\n"
			"  build --kind KIND --capacity N [--fpr P] [--growth G]\n"
			"                            a new filter of the keys, on stdout (fpr 0.01\n"
			"                            by default); as bloom_empty(N, P, G) plus the\n"
			"                            keys: with a growth factor G from 2 to 16, a\n"
			"                            filter that grows as keys come (0, the default:\n"
			"                            of fixed size)\n"
			"  union FILE FILE...        the union of the filters, on stdout\n"
			"  convert FILE              FILE in another form, on stdout: text if it\n"
			"                            was binary, else binary\n"
			"  sync CONNINFO INDEX FILE [--interval SECONDS] [--count N]\n"
			"                            keep FILE a current copy of a bloomfilter\n"
			"                            index's filter: a snapshot, then every SECONDS\n"
			"                            (1 by default) the index's changes, or a new\n"
			"                            snapshot when the server says so.  FILE is\n"
			"                            replaced atomically after each sync, and\n"
			"                            \"synced LSN reload|delta BYTES\" printed; a\n"
			"                            lost or refused connection is reported on\n"
			"                            stderr and retried at the next round.  Stops\n"
			"                            after N syncs with --count.  CONNINFO is a\n"
			"                            libpq connection string or URI (\"\": PGHOST,\n"
			"                            PGPORT, ... from the environment)\n"
			"\n"
			"Options:\n"
			"  --format binary|text|hex  form of a filter written to stdout or by sync\n"
			"                            (default: binary for build and sync, the\n"
			"                            input's form for add and union)\n"
			"  --v1-utf8                 a version 1 filter was built in a UTF8 database\n"
			"                            (its non-ASCII text keys are refused otherwise)\n"
			"  --help, --version\n"
			"\n"
			"FILE is a filter in binary (bloom::bytea), text (bloom:...) or hex (\\x...,\n"
			"psql's output of f::bytea) form; - reads it from stdin.  Without KEY\n"
			"arguments, keys are read from stdin, one per line.  KIND is number, float,\n"
			"text, bytea, uuid, boolean, date, timestamp or timestamptz; keys are\n"
			"spelled as SQL input spells them (bytea as \\x and hex digits).\n"
			"\n"
			"Exit status: 0 done, 1 invalid filter, key or combination (sync: an\n"
			"error of the server's that retrying would not mend, such as a missing\n"
			"index or privilege), 2 usage, 3 a file could not be read or written.\n",
			progname);
}

void
fail_usage(const char *message)
{
	fprintf(stderr, "%s: %s\nTry \"%s --help\".\n", progname, message, progname);
	exit(EXIT_USAGE);
}

void
fail(int status, const char *what, const char *message)
{
	if (what != NULL)
		fprintf(stderr, "%s: %s: %s\n", progname, what, message);
	else
		fprintf(stderr, "%s: %s\n", progname, message);
	exit(status);
}

/* ---------------------------------------------------------------------
 * Files and forms
 * ---------------------------------------------------------------------
 */

static char *
read_all(FILE *in, const char *name, size_t *len)
{
	size_t		room = 1 << 16;
	size_t		used = 0;
	char	   *data = malloc(room);

	while (data != NULL)
	{
		size_t		got = fread(data + used, 1, room - used, in);

		used += got;
		if (got == 0)
			break;
		if (used == room)
		{
			char	   *bigger = realloc(data, room * 2);

			if (bigger == NULL)
			{
				free(data);
				data = NULL;
				break;
			}
			data = bigger;
			room *= 2;
		}
	}
	if (data == NULL)
		fail(EXIT_IO, name, "out of memory");
	if (ferror(in))
		fail(EXIT_IO, name, strerror(errno));
	*len = used;
	return data;
}

static Form
form_of(const char *data, size_t len)
{
	if (len >= 6 && memcmp(data, "bloom:", 6) == 0)
		return FORM_TEXT;
	if (len >= 2 && data[0] == '\\' && data[1] == 'x')
		return FORM_HEX;
	return FORM_BINARY;
}

/* Loads FILE (- for stdin); *form says which form it was in. */
static bfc_filter *
load_file(const char *name, Form *form, bool v1_utf8)
{
	FILE	   *in = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
	char	   *data;
	size_t		len;
	bfc_error	err;
	bfc_filter *filter;

	if (in == NULL)
		fail(EXIT_IO, name, strerror(errno));
	data = read_all(in, name, &len);
	if (in != stdin)
		fclose(in);
	if (form != NULL)
		*form = form_of(data, len);
	filter = bfc_load(data, len, &err);
	free(data);
	if (filter == NULL)
		fail(err.code == BFC_ERR_NOMEM ? EXIT_IO : EXIT_DATA, name, err.message);
	bfc_set_v1_utf8(filter, v1_utf8);
	return filter;
}

static void
write_or_fail(FILE *out, const char *name, const void *data, size_t len)
{
	if (len > 0 && fwrite(data, 1, len, out) != len)
		fail(EXIT_IO, name, strerror(errno));
}

/* Writes a filter in a form to out, named name in messages. */
void
write_filter_to(FILE *out, const char *name, const bfc_filter *filter, Form form)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(filter, &len);

	if (form == FORM_BINARY)
	{
		if (out == stdout && isatty(STDOUT_FILENO))
			fail(EXIT_USAGE, NULL,
				 "not writing a binary filter to a terminal; redirect it, or use --format text");
		write_or_fail(out, name, bytes, len);
	}
	else if (form == FORM_TEXT)
	{
		char	   *text = malloc(bfc_text_size(filter));
		size_t		n;

		if (text == NULL)
			fail(EXIT_IO, NULL, "out of memory");
		n = bfc_write_text(filter, text);
		text[n] = '\n';
		write_or_fail(out, name, text, n + 1);
		free(text);
	}
	else
	{
		static const char digits[] = "0123456789abcdef";
		char	   *hex = malloc(2 * len + 3);

		if (hex == NULL)
			fail(EXIT_IO, NULL, "out of memory");
		hex[0] = '\\';
		hex[1] = 'x';
		for (size_t i = 0; i < len; i++)
		{
			hex[2 + 2 * i] = digits[bytes[i] >> 4];
			hex[3 + 2 * i] = digits[bytes[i] & 15];
		}
		hex[2 * len + 2] = '\n';
		write_or_fail(out, name, hex, 2 * len + 3);
		free(hex);
	}
	if (fflush(out) != 0)
		fail(EXIT_IO, name, strerror(errno));
}

static void
write_filter(const bfc_filter *filter, Form form)
{
	write_filter_to(stdout, "stdout", filter, form);
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

typedef int (*KeyAction) (bfc_filter *filter, const char *key, size_t len, bfc_error *err);

/*
 * Calls action on each key: the arguments, or the lines of stdin.  Stops
 * at the first key that fails, saying which.
 */
static void
for_each_key(bfc_filter *filter, char **keys, int nkeys, KeyAction action)
{
	bfc_error	err;

	if (nkeys > 0)
	{
		for (int i = 0; i < nkeys; i++)
			if (action(filter, keys[i], strlen(keys[i]), &err) < 0)
				fail(EXIT_DATA, keys[i], err.message);
	}
	else
	{
		char	   *line = NULL;
		size_t		room = 0;
		ssize_t		len;
		unsigned long lineno = 0;

		while ((len = getline(&line, &room, stdin)) >= 0)
		{
			lineno++;
			if (len > 0 && line[len - 1] == '\n')
				len--;
			if (action(filter, line, (size_t) len, &err) < 0)
			{
				char		where[64];

				snprintf(where, sizeof(where), "stdin line %lu", lineno);
				fail(EXIT_DATA, where, err.message);
			}
		}
		if (ferror(stdin))
			fail(EXIT_IO, "stdin", strerror(errno));
		free(line);
	}
}

static int
print_answer(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	int			answer = bfc_contains_str(filter, key, len, err);

	if (answer < 0)
		return -1;
	fwrite(key, 1, len, stdout);
	fputs(answer ? "\tt\n" : "\tf\n", stdout);
	return 0;
}

static int
add_key(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	return bfc_add_str(filter, key, len, err);
}

/* ---------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------
 */

/* A double as float8out would print it: the shortest text that reads back. */
static void
print_double(const char *name, double value)
{
	char		text[40];

	if (value != value)
		strcpy(text, "NaN");
	else if (isinf(value))
		strcpy(text, value > 0 ? "Infinity" : "-Infinity");
	else
		for (int precision = 1; precision <= 17; precision++)
		{
			snprintf(text, sizeof(text), "%.*g", precision, value);
			if (strtod(text, NULL) == value)
				break;
		}
	printf("%s\t%s\n", name, text);
}

static int
command_info(char **args, int nargs, bool v1_utf8)
{
	bfc_filter *filter;
	bfc_info	info;

	if (nargs != 1)
		fail_usage("info takes one FILE");
	filter = load_file(args[0], NULL, v1_utf8);
	bfc_get_info(filter, &info);
	printf("format_version\t%d\n", info.format_version);
	printf("layout\t%s\n", info.layout);
	printf("bits\t%lld\n", (long long) info.bits);
	printf("bytes\t%lld\n", (long long) info.bytes);
	printf("hashes\t%d\n", info.hashes);
	printf("capacity\t%lld\n", (long long) info.capacity);
	print_double("target_fpr", info.target_fpr);
	printf("inserted\t%lld\n", (long long) info.inserted);
	printf("bits_set\t%lld\n", (long long) info.bits_set);
	print_double("fill_ratio", info.fill_ratio);
	print_double("estimated_distinct", info.estimated_distinct);
	print_double("estimated_fpr", info.estimated_fpr);
	printf("key_kind\t%s\n", info.key_kind);
	printf("seed\t%lld\n", (long long) info.seed);
	printf("key_environment\t%s\n", info.key_environment);
	printf("over_capacity\t%s\n", info.over_capacity ? "t" : "f");
	printf("segments\t%d\n", bfc_segments(filter));
	if (bfc_growth(filter) != 0)
		printf("growth\t%d\n", bfc_growth(filter));
	else
		printf("growth\t\n");	/* NULL in bloom_info, like key_environment */
	bfc_free(filter);
	return 0;
}

static int
command_contains(char **args, int nargs, bool v1_utf8)
{
	bfc_filter *filter;

	if (nargs < 1)
		fail_usage("contains takes a FILE and keys");
	if (nargs == 1 && strcmp(args[0], "-") == 0)
		fail_usage("with the filter on stdin, the keys must be arguments");
	filter = load_file(args[0], NULL, v1_utf8);
	for_each_key(filter, args + 1, nargs - 1, print_answer);
	if (fflush(stdout) != 0)
		fail(EXIT_IO, "stdout", strerror(errno));
	bfc_free(filter);
	return 0;
}

static int
command_add(char **args, int nargs, Form form, bool v1_utf8)
{
	bfc_filter *filter;
	Form		input_form;

	if (nargs < 1)
		fail_usage("add takes a FILE and keys");
	if (nargs == 1 && strcmp(args[0], "-") == 0)
		fail_usage("with the filter on stdin, the keys must be arguments");
	filter = load_file(args[0], &input_form, v1_utf8);
	for_each_key(filter, args + 1, nargs - 1, add_key);
	write_filter(filter, form == FORM_DEFAULT ? input_form : form);
	bfc_free(filter);
	return 0;
}

static int
command_build(char **args, int nargs, const char *kind_name, const char *capacity_text,
			  const char *fpr_text, const char *growth_text, Form form)
{
	int			kind;
	char	   *end;
	unsigned long long capacity;
	double		fpr = 0.01;
	long		growth = 0;
	bfc_error	err;
	bfc_filter *filter;

	if (kind_name == NULL || capacity_text == NULL)
		fail_usage("build needs --kind and --capacity");
	kind = bfc_kind_from_name(kind_name);
	if (kind <= BFC_KIND_NONE || kind >= BFC_KIND_OTHER)
		fail_usage("--kind must be number, float, text, bytea, uuid, boolean, date, timestamp or timestamptz");
	errno = 0;
	capacity = strtoull(capacity_text, &end, 10);
	if (errno != 0 || *end != '\0' || end == capacity_text || capacity_text[0] == '-')
		fail_usage("--capacity must be a positive integer");
	if (fpr_text != NULL)
	{
		fpr = strtod(fpr_text, &end);
		if (*end != '\0' || end == fpr_text)
			fail_usage("--fpr must be a number in (0, 0.5]");
	}
	if (growth_text != NULL)
	{
		errno = 0;
		growth = strtol(growth_text, &end, 10);
		if (errno != 0 || *end != '\0' || end == growth_text || growth < 0 || growth > 255)
			fail_usage("--growth must be an integer: 0 (a filter of fixed size) or 2 to 16");
	}
	filter = bfc_create_growing((bfc_kind) kind, capacity, fpr, (int) growth, &err);
	if (filter == NULL)
		fail(err.code == BFC_ERR_NOMEM ? EXIT_IO : EXIT_DATA, NULL, err.message);
	for_each_key(filter, args, nargs, add_key);
	write_filter(filter, form == FORM_DEFAULT ? FORM_BINARY : form);
	bfc_free(filter);
	return 0;
}

static int
command_union(char **args, int nargs, Form form, bool v1_utf8)
{
	bfc_filter *result;
	Form		input_form;
	bfc_error	err;

	if (nargs < 2)
		fail_usage("union takes two or more FILEs");
	result = load_file(args[0], &input_form, v1_utf8);
	for (int i = 1; i < nargs; i++)
	{
		bfc_filter *next = load_file(args[i], NULL, v1_utf8);

		if (bfc_union(result, next, &err) != 0)
			fail(EXIT_DATA, args[i], err.message);
		bfc_free(next);
	}
	write_filter(result, form == FORM_DEFAULT ? input_form : form);
	bfc_free(result);
	return 0;
}

static int
command_convert(char **args, int nargs, Form form)
{
	bfc_filter *filter;
	Form		input_form;

	if (nargs != 1)
		fail_usage("convert takes one FILE");
	filter = load_file(args[0], &input_form, false);
	if (form == FORM_DEFAULT)
		form = input_form == FORM_BINARY ? FORM_TEXT : FORM_BINARY;
	write_filter(filter, form);
	bfc_free(filter);
	return 0;
}

/* The command line after the command: its arguments and options. */
typedef struct Options
{
	char	  **args;
	int			nargs;
	const char *kind;
	const char *capacity;
	const char *fpr;
	const char *growth;
	const char *interval;
	const char *count;
	Form		form;
	bool		v1_utf8;
} Options;

static void
print_help(void)
{
	usage(stdout);
	fflush(stdout);
	exit(0);
}

/* The value of an option that takes one, in o. */
static void
take_option_value(Options *o, const char *option, const char *value)
{
	if (strcmp(option, "--kind") == 0)
		o->kind = value;
	else if (strcmp(option, "--capacity") == 0)
		o->capacity = value;
	else if (strcmp(option, "--fpr") == 0)
		o->fpr = value;
	else if (strcmp(option, "--growth") == 0)
		o->growth = value;
	else if (strcmp(option, "--interval") == 0)
		o->interval = value;
	else if (strcmp(option, "--count") == 0)
		o->count = value;
	else if (strcmp(value, "binary") == 0)
		o->form = FORM_BINARY;
	else if (strcmp(value, "text") == 0)
		o->form = FORM_TEXT;
	else if (strcmp(value, "hex") == 0)
		o->form = FORM_HEX;
	else
		fail_usage("--format must be binary, text or hex");
}

static bool
takes_value(const char *option)
{
	static const char *const with_value[] = {
		"--kind", "--capacity", "--fpr", "--growth", "--format", "--interval", "--count"
	};

	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (strcmp(option, with_value[i]) == 0)
			return true;
	return false;
}

/* argv[2..]: the arguments and options of a command. */
static void
parse_arguments(int argc, char **argv, Options *o)
{
	bool		options_done = false;

	memset(o, 0, sizeof(*o));
	o->form = FORM_DEFAULT;
	o->args = calloc(argc, sizeof(char *));
	if (o->args == NULL)
		fail(EXIT_IO, NULL, "out of memory");
	for (int i = 2; i < argc; i++)
	{
		const char *arg = argv[i];
		char		message[200];

		/* keys may start with "-": after "--" nothing is an option */
		if (options_done || arg[0] != '-' || arg[1] != '-')
			o->args[o->nargs++] = argv[i];
		else if (strcmp(arg, "--") == 0)
			options_done = true;
		else if (strcmp(arg, "--help") == 0)
			print_help();
		else if (strcmp(arg, "--v1-utf8") == 0)
			o->v1_utf8 = true;
		else if (takes_value(arg))
		{
			if (i + 1 >= argc)
				fail_usage("an option lacks its value");
			take_option_value(o, arg, argv[++i]);
		}
		else
		{
			snprintf(message, sizeof(message), "unknown option %.100s", arg);
			fail_usage(message);
		}
	}
}

/* Runs the command named by argv[1]. */
static int
run_command(const char *command, const Options *o)
{
	if (strcmp(command, "build") != 0 &&
		(o->kind != NULL || o->capacity != NULL || o->fpr != NULL || o->growth != NULL))
		fail_usage("--kind, --capacity, --fpr and --growth are options of build");
	if (strcmp(command, "sync") != 0 && (o->interval != NULL || o->count != NULL))
		fail_usage("--interval and --count are options of sync");
	if (strcmp(command, "info") == 0)
		return command_info(o->args, o->nargs, o->v1_utf8);
	if (strcmp(command, "contains") == 0)
		return command_contains(o->args, o->nargs, o->v1_utf8);
	if (strcmp(command, "add") == 0)
		return command_add(o->args, o->nargs, o->form, o->v1_utf8);
	if (strcmp(command, "build") == 0)
		return command_build(o->args, o->nargs, o->kind, o->capacity, o->fpr, o->growth,
							 o->form);
	if (strcmp(command, "union") == 0)
		return command_union(o->args, o->nargs, o->form, o->v1_utf8);
	if (strcmp(command, "convert") == 0)
		return command_convert(o->args, o->nargs, o->form);
	if (strcmp(command, "sync") == 0)
		return command_sync(o->args, o->nargs, o->interval, o->count, o->form);
	fail_usage("unknown command");
}

int
main(int argc, char **argv)
{
	static char stdout_buffer[1 << 16];
	Options		options;

	setvbuf(stdout, stdout_buffer, _IOFBF, sizeof(stdout_buffer));
	if (argc < 2)
		fail_usage("no command");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		print_help();
	if (strcmp(argv[1], "--version") == 0)
	{
		printf("bloomfilter-cli %s\n", BFC_VERSION);
		fflush(stdout);
		return 0;
	}
	parse_arguments(argc, argv, &options);
	return run_command(argv[1], &options);
}
