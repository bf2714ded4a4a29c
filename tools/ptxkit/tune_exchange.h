/* ptxkit tune --export FILE / --import FILE (- for standard output / input). */
#ifndef PTXKIT_TUNE_EXCHANGE_H
#define PTXKIT_TUNE_EXCHANGE_H

int tune_export(const char *path);
int tune_import(const char *path);

#endif
