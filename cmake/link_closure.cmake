# iron_expect_not_linked(TARGET FORBIDDEN...): stops the configuration when TARGET links any of
# FORBIDDEN, directly or through the libraries it links (its link interface, followed to the
# end), naming the chain that brings it in.

# Appends to OUT_VAR every "a -> b -> …" chain from TARGET through linked CMake targets.
function(_iron_link_chains target chain out_var)
  set(found)
  get_target_property(direct ${target} LINK_LIBRARIES)
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS direct interface)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(dep AND TARGET ${dep} AND NOT "${dep}" IN_LIST chain)
      set(next ${chain} ${dep})
      string(REPLACE ";" " -> " text "${next}")
      list(APPEND found "${text}")
      _iron_link_chains(${dep} "${next}" deeper)
      list(APPEND found ${deeper})
    endif()
  endforeach()
  set(${out_var} ${found} PARENT_SCOPE)
endfunction()

function(iron_expect_not_linked target)
  _iron_link_chains(${target} ${target} chains)
  foreach(forbidden IN LISTS ARGN)
    foreach(chain IN LISTS chains)
      if(chain MATCHES " -> ${forbidden}$")
        message(FATAL_ERROR "${target} must not link ${forbidden}, but does: ${chain}")
      endif()
    endforeach()
  endforeach()
endfunction()
