# The route cache of the hot paths: colliding entries, bounds and
# alignment on cached routes, stale gptrs after a free, path counts.
dart_add_test(route_cache SOURCES test_route_cache.c
              LAYOUTS node upn1 upn2 noshm UCX)
