/* minimlc's C runtime for models built into shared libraries: reads the weights file, fills the precomputed
 * buffers with the model's init entry, owns the thread pool, and calls the entry (`main_packed`). See
 * `minimlc.driver.shared_library` for the weights file's layout. */
#include "minimlc_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The thread pool (LLVM IR from runtime/threadpool_ir.py, compiled into the library beside the model), and the
 * allocation guard built into it (runtime/alloc_guard_ir.py): the entries run through minimlc_guarded_call, which
 * returns the bytes an allocation of the call could not get (0: none failed) instead of letting the code run on. */
void *minimlc_pool_create(int32_t num_threads);
void minimlc_pool_destroy(void *pool);
int64_t minimlc_guarded_call(void (*entry)(void **), void **args);
void *minimlc_checked_alloc(size_t alignment, size_t size);

/* The library is linked with -Wl,--wrap=aligned_alloc: the model code's allocations (and this file's, which fail
 * as aligned_alloc does outside a guarded call) are checked. */
MINIMLC_HIDDEN void *__wrap_aligned_alloc(size_t alignment, size_t size) {
    return minimlc_checked_alloc(alignment, size);
}

#define ALIGNMENT 64
#define HEADER_BYTES 32
static const char MAGIC[8] = {'M', 'L', 'C', 'W', 'G', 'T', 0, 0};
enum { FORMAT_VERSION = 1 };

struct minimlc_instance {
    const minimlc_desc *desc;
    void *pool;
    unsigned char *file;  /* the weights file, 64-byte aligned; weights point into it */
    void **precomputed;
    void **args;          /* the entry's arguments with the pool, weights and precomputed buffers filled in */
    int num_args;
};

static __thread char last_error[512];

static void set_error(const char *format, ...) {
    va_list list;
    va_start(list, format);
    vsnprintf(last_error, sizeof last_error, format, list);
    va_end(list);
}

const char *minimlc_last_error(void) { return last_error; }

void minimlc_set_error(const char *message) { set_error("%s", message); }

static uint64_t read_u64(const unsigned char *p) {
    uint64_t value;
    memcpy(&value, p, sizeof value);
    return value;
}

static uint32_t read_u32(const unsigned char *p) {
    uint32_t value;
    memcpy(&value, p, sizeof value);
    return value;
}

static size_t round_up(size_t bytes) { return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT; }

/* Whether a guarded call of `desc`'s `function` (load: its init entry; run: its entry) failed to allocate `failed`
 * bytes (0: it did not); if so, the error names them. */
static int out_of_memory(const minimlc_desc *desc, const char *function, int64_t failed) {
    if (failed)
        set_error("%s_%s: out of memory: the model's native code could not allocate %lld bytes (%.1f GiB) for its "
                  "intermediate buffers", desc->name, function, (long long)failed, (double)failed / (1 << 30));
    return failed != 0;
}

/* Read `path` whole into a 64-byte aligned buffer; NULL (error set) on failure. */
static unsigned char *read_weights(const minimlc_desc *desc, const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        set_error("%s: cannot open weights file '%s'", desc->name, path);
        return NULL;
    }
    long end = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    unsigned char *buffer = end >= 0 ? aligned_alloc(ALIGNMENT, round_up((size_t)end + 1)) : NULL;
    if (!buffer || fseek(file, 0, SEEK_SET) != 0 || fread(buffer, 1, (size_t)end, file) != (size_t)end) {
        set_error("%s: cannot read weights file '%s'", desc->name, path);
        free(buffer);
        fclose(file);
        return NULL;
    }
    fclose(file);
    *size = (size_t)end;
    return buffer;
}

/* Check the weights file against `desc` and point `weights` into it; 0 on success. */
static int check_weights(const minimlc_desc *desc, const char *path, const unsigned char *file, size_t size,
                         void **weights) {
    if (size < HEADER_BYTES || memcmp(file, MAGIC, sizeof MAGIC) != 0) {
        set_error("%s: '%s' is not a minimlc weights file", desc->name, path);
        return 1;
    }
    uint32_t version = read_u32(file + 8), count = read_u32(file + 12);
    if (version != FORMAT_VERSION || read_u64(file + 16) != desc->fingerprint || (int)count != desc->num_weights) {
        set_error("%s: '%s' holds the weights of another model (or another format): build them together",
                  desc->name, path);
        return 1;
    }
    if (read_u64(file + 24) != size || size < HEADER_BYTES + 16 * (size_t)count) {
        set_error("%s: '%s' is truncated", desc->name, path);
        return 1;
    }
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t offset = read_u64(file + HEADER_BYTES + 16 * i), bytes = read_u64(file + HEADER_BYTES + 16 * i + 8);
        if (bytes != desc->weight_bytes[i] || offset % ALIGNMENT != 0 || offset > size || bytes > size - offset) {
            set_error("%s: '%s' is corrupt: weight %u has %llu bytes at offset %llu", desc->name, path, i,
                      (unsigned long long)bytes, (unsigned long long)offset);
            return 1;
        }
        weights[i] = (void *)(file + offset);
    }
    return 0;
}

minimlc_instance *minimlc_instance_load(const minimlc_desc *desc, const char *weights_path, int num_threads) {
    const char *missing = desc->missing_cpu_feature();
    if (missing) {
        set_error("%s: this CPU lacks %s, which the code built for target '%s' uses: build the library for this "
                  "CPU (minimlc build --target)", desc->name, missing, desc->target);
        return NULL;
    }
    minimlc_instance *instance = calloc(1, sizeof *instance);
    if (!instance) {
        set_error("%s: out of memory", desc->name);
        return NULL;
    }
    instance->desc = desc;
    int io = desc->num_inputs + desc->num_outputs, has_pool = desc->pool_slot >= 0;
    int tail = desc->num_weights + desc->num_precomputed;
    instance->num_args = io + has_pool + tail;
    instance->args = calloc((size_t)instance->num_args + 1, sizeof(void *));
    instance->precomputed = calloc((size_t)desc->num_precomputed + 1, sizeof(void *));
    size_t size = 0;
    if (!instance->args || !instance->precomputed) {
        set_error("%s: out of memory", desc->name);
        goto fail;
    }
    if (!weights_path) {
        set_error("%s: no weights file given", desc->name);
        goto fail;
    }
    instance->file = read_weights(desc, weights_path, &size);
    void **weights = instance->args + io + has_pool;
    if (!instance->file || check_weights(desc, weights_path, instance->file, size, weights) != 0)
        goto fail;
    for (int i = 0; i < desc->num_precomputed; ++i) {
        instance->precomputed[i] = aligned_alloc(ALIGNMENT, round_up(desc->precomputed_bytes[i]));
        if (!instance->precomputed[i]) {
            set_error("%s: out of memory for precomputed buffer %d", desc->name, i);
            goto fail;
        }
        weights[desc->num_weights + i] = instance->precomputed[i];
    }
    if (desc->init && desc->num_precomputed > 0 &&
        out_of_memory(desc, "load", minimlc_guarded_call(desc->init, weights)))
        goto fail;
    if (has_pool) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int threads = num_threads > 0 ? num_threads : (cores > 0 ? (int)cores : 1);
        instance->pool = minimlc_pool_create(threads);
        if (!instance->pool) {
            set_error("%s: cannot start a thread pool of %d threads", desc->name, threads);
            goto fail;
        }
        instance->args[desc->pool_slot] = instance->pool;
    }
    return instance;
fail:
    minimlc_instance_free(instance);
    return NULL;
}

int minimlc_instance_run(const minimlc_desc *desc, minimlc_instance *instance, const void *const *inputs,
                         void *const *outputs) {
    if (!instance) {
        set_error("%s_run: the model is NULL (did its load fail?)", desc->name);
        return 1;
    }
    void *args[instance->num_args + 1];
    memcpy(args, instance->args, (size_t)instance->num_args * sizeof(void *));
    for (int i = 0; i < desc->num_inputs; ++i) {
        if (!inputs[i]) {
            set_error("%s_run: input %d is NULL", desc->name, i);
            return 1;
        }
        args[i] = (void *)inputs[i];
    }
    for (int i = 0; i < desc->num_outputs; ++i) {
        if (!outputs[i]) {
            set_error("%s_run: output %d is NULL", desc->name, i);
            return 1;
        }
        args[desc->num_inputs + i] = outputs[i];
    }
    return out_of_memory(desc, "run", minimlc_guarded_call(desc->entry, args)) ? 3 : 0;
}

void minimlc_instance_free(minimlc_instance *instance) {
    if (!instance)
        return;
    if (instance->pool)
        minimlc_pool_destroy(instance->pool);
    if (instance->precomputed)
        for (int i = 0; i < instance->desc->num_precomputed; ++i)
            free(instance->precomputed[i]);
    free(instance->precomputed);
    free(instance->args);
    free(instance->file);
    free(instance);
}
