# The rooms of rewind's tree (docs/architecture.md). Each folder that holds
# one concept is one library; a room may include the headers of its own
# folder and of the rooms it links directly, and of no other room.
#
# The link graph already makes the compiler refuse a header of a room that
# is not below (its folder is not on the include path). The check below
# refuses, before a room compiles, a header of a room it does not link
# itself: one that is below but reached only through another room (the gdb
# room through time travel into the replay engine, say).

# rewind_room(TARGET): the current folder is a room, built as TARGET, whose
# headers are included by their names alone.
function(rewind_room target)
  set_property(GLOBAL APPEND PROPERTY REWIND_ROOMS ${target})
  set_property(TARGET ${target} PROPERTY REWIND_ROOM_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})
  elseif(NOT type STREQUAL "EXECUTABLE")
    target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
endfunction()

# rewind_check_rooms(): once every room is declared.
function(rewind_check_rooms)
  get_property(rooms GLOBAL PROPERTY REWIND_ROOMS)
  set(all_dirs "")
  foreach(room ${rooms})
    get_target_property(dir ${room} REWIND_ROOM_DIR)
    list(APPEND all_dirs ${dir})
  endforeach()
  foreach(room ${rooms})
    get_target_property(dir ${room} REWIND_ROOM_DIR)
    get_target_property(type ${room} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${room} INTERFACE_LINK_LIBRARIES)
    else()
      get_target_property(links ${room} LINK_LIBRARIES)
    endif()
    set(allowed "")
    foreach(link ${links})
      if(TARGET ${link})
        get_target_property(link_dir ${link} REWIND_ROOM_DIR)
        if(link_dir)
          list(APPEND allowed ${link_dir})
        endif()
      endif()
    endforeach()
    set(config ${CMAKE_BINARY_DIR}/rooms/${room}.cmake)
    file(CONFIGURE OUTPUT ${config} CONTENT
      "set(TOP \"${CMAKE_SOURCE_DIR}\")\nset(ROOM \"${dir}\")\nset(ALLOWED \"${allowed}\")\nset(ROOMS \"${all_dirs}\")\n")
    file(GLOB files CONFIGURE_DEPENDS ${dir}/*.h ${dir}/*.cpp ${dir}/*.c)
    set(stamp ${CMAKE_BINARY_DIR}/rooms/${room}.checked)
    add_custom_command(OUTPUT ${stamp}
      COMMAND ${CMAKE_COMMAND} -DCONFIG=${config} -DSTAMP=${stamp}
              -P ${CMAKE_SOURCE_DIR}/scripts/check-room-includes.cmake
      DEPENDS ${files} ${config} ${CMAKE_SOURCE_DIR}/scripts/check-room-includes.cmake
      COMMENT "Checking the includes of ${room}"
      VERBATIM)
    add_custom_target(${room}_includes DEPENDS ${stamp})
    add_dependencies(${room} ${room}_includes)
  endforeach()
endfunction()
