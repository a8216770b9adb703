# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Man pages written in markdown with a pandoc title block, turned into man
# format with pandoc at build time and installed into man<section>, the way
# rdma-core's buildlib/rdma_man.cmake does it.  Included by every directory
# that has man pages (libibverbs/ext/man, tools/man); the section comes from
# the file name: foo.3.md -> man3/foo.3.
include_guard(GLOBAL)

option(DAXLEASE_REQUIRE_MAN_PAGES
       "Fail the configuration when pandoc is missing (packaging)" OFF)
find_program(PANDOC_EXECUTABLE pandoc)
if(NOT PANDOC_EXECUTABLE)
	if(DAXLEASE_REQUIRE_MAN_PAGES)
		message(FATAL_ERROR "pandoc is needed to build the man pages")
	endif()
	message(WARNING "pandoc not found: man pages are not built")
endif()
if(NOT TARGET docs)
	add_custom_target(docs ALL)
endif()

function(daxlease_man_pages)
	if(NOT PANDOC_EXECUTABLE)
		return()
	endif()
	foreach(src ${ARGN})
		get_filename_component(name ${src} NAME)
		string(REGEX REPLACE "\\.md$" "" page ${name})
		string(REGEX REPLACE "^.+\\.([0-9])$" "\\1" section ${page})
		set(out ${CMAKE_CURRENT_BINARY_DIR}/${page})
		add_custom_command(
			OUTPUT ${out}
			COMMAND ${PANDOC_EXECUTABLE} -s -f markdown-smart -t man
				-o ${out} ${CMAKE_CURRENT_SOURCE_DIR}/${src}
			MAIN_DEPENDENCY ${CMAKE_CURRENT_SOURCE_DIR}/${src}
			COMMENT "Creating man page ${page}"
			VERBATIM)
		add_custom_target(man-${page} ALL DEPENDS ${out})
		add_dependencies(docs man-${page})
		install(FILES ${out}
			DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
	endforeach()
endfunction()
